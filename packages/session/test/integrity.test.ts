import { spawn } from 'node:child_process'
import { once } from 'node:events'
import fs from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { appsPerTest, BATCHED, human, itOnFiles, LOG_VERSION, readLog, removeSeal, replaceLog, STORE, tempDir, writeSession } from './helpers.ts'

const here = path.dirname(fileURLToPath(import.meta.url))
const launch = appsPerTest()

async function signedSession(dir: string) {
  const app = await launch(dir)
  const session = await app.sessions.create({ cwd: dir })
  session.append('input/queued', { message: human('m1', 'hello') })
  session.append('user/message', human('m1', 'hello'))
  session.append('test/item', { i: 1 })
  await app.sessions.close(session)
  return { ...app, id: session.id, file: session.file }
}

async function forge(file: string, withMac: boolean) {
  const child = spawn(process.execPath, [path.join(here, 'fixtures/forge-child.mjs'), file, withMac ? 'mac' : ''], { stdio: 'inherit' })
  const [code] = await once(child, 'exit')
  expect(code).toBe(0)
}

const lines = async (file: string) => (await readLog(file)).trimEnd().split('\n')

describe('tamper evidence', () => {
  it(`signs ${BATCHED ? 'every batch of lines written together' : 'every line'} with a chained mac, and a clean log verifies`, async () => {
    const dir = await tempDir()
    const { sessions, id, file } = await signedSession(dir)
    const all = await lines(file)
    expect(JSON.parse(all[0]).data.version).toBe(LOG_VERSION)
    if (BATCHED) {
      // The header is written alone, the three records by one flush: one batch, its mac on its first line.
      expect(all[0]).toMatch(/"keyId":"[0-9a-f]{16}"},"mac":"[0-9a-f]{64}"}$/)
      expect(all[1]).toMatch(/,"batch":3,"mac":"[0-9a-f]{64}"}$/)
      for (const line of all.slice(2)) expect(line).not.toContain('"mac"')
    } else for (const line of all) expect(line).toMatch(/,"mac":"[0-9a-f]{64}"}$/)
    const session = await sessions.open(id, { readOnly: true })
    expect(session.integrity).toEqual({ state: 'signed', lines: 4, unsignedPrefix: 0 })
  })

  for (const withMac of [false, true]) {
    itOnFiles(`a human input/queued record appended by another process (${withMac ? 'with a made-up mac' : 'unsigned'}) is detected at open and never replayed`, async () => {
      const dir = await tempDir()
      const { id, file } = await signedSession(dir)
      await forge(file, withMac)
      const app = await launch(dir)
      await expect(app.sessions.open(id)).rejects.toMatchObject({
        code: 'SESSION_TAMPERED', file, line: 5,
        message: `${file}:5: line ${withMac ? 'does not match its signature: it was edited, moved, inserted or written by someone without the key' : 'is not signed, yet lines before it are'}; the log was changed by someone other than goalkeeper, so nothing from this line on is trusted and it is not opened for writing`,
      })
      // Refused before a byte was written, and a reader sees where trust ends.
      expect(await lines(file)).toHaveLength(5)
      const read = await app.sessions.open(id, { readOnly: true })
      expect(read.integrity).toMatchObject({ state: 'tampered', line: 5 })
      await expect(app.sessions.fork(id, { uptoSeq: 4 })).rejects.toMatchObject({ code: 'SESSION_TAMPERED' })
      const fork = await app.sessions.fork(id, { uptoSeq: 3 })
      expect(fork.records.map((r) => r.type)).toEqual(['session/header', 'input/queued', 'user/message', 'test/item'])
    })
  }

  itOnFiles('an edit, a reorder, or a line moved from another session mid-file: the first changed line is named', async () => {
    const dir = await tempDir()
    const { sessions, id, file } = await signedSession(dir)
    const original = await lines(file)
    const write = (ls: string[]) => fs.writeFile(file, `${ls.join('\n')}\n`)

    // Per batch, a change is located to the batch that holds it: here lines 2-4, written by one flush.
    const batch = (line: number) => (BATCHED ? 2 : line)
    for (const edited of [1, 3]) {
      await write(original.map((l, i) => (i === edited ? l.replace('"at":', '"at": ') : l)))
      await expect(sessions.open(id)).rejects.toMatchObject({ code: 'SESSION_TAMPERED', line: batch(edited + 1) })
    }

    // Two lines swapped, their seqs kept in place so that only the signatures can tell.
    for (const at of [1, 2]) {
      const swapped = [...original]
      swapped[at] = original[at + 1].replace(`"seq":${at + 1}`, `"seq":${at}`)
      swapped[at + 1] = original[at].replace(`"seq":${at}`, `"seq":${at + 1}`)
      await write(swapped)
      await expect(sessions.open(id)).rejects.toMatchObject({ code: 'SESSION_TAMPERED', line: batch(at + 1) })
    }

    const other = await signedSession(await tempDir())
    await write([...original.slice(0, 3), (await lines(other.file))[3]])
    await expect(sessions.open(id)).rejects.toMatchObject({ code: 'SESSION_TAMPERED', line: batch(4) })
    // A whole batch of another session in place of this one's: its mac chains from another.
    await write([original[0], ...(await lines(other.file)).slice(1)])
    await expect(sessions.open(id)).rejects.toMatchObject({ code: 'SESSION_TAMPERED', line: 2 })

    await write(original)
    await sessions.close(await sessions.open(id))
  })

  itOnFiles('a truncation while the session is open stops the writer before it leaves a hole of NUL bytes', async () => {
    const dir = await tempDir()
    const app = await launch(dir)
    const session = await app.sessions.create({ cwd: dir })
    for (let i = 0; i < 5; i++) session.append('test/item', { i })
    await app.sessions.flush(session)
    const size = (await fs.stat(session.file)).size
    await fs.truncate(session.file, size - 20)
    session.append('test/item', { i: 5 })
    await expect(app.sessions.flush(session)).rejects.toMatchObject({ code: 'SESSION_LOST', reason: 'truncated', message: expect.stringContaining(`was cut short by someone else (${size - 20} bytes where ${size} were written)`) })
    expect((await fs.readFile(session.file)).includes(0)).toBe(false)
    expect((await fs.stat(session.file)).size).toBe(size - 20)
  })

  const stripMacs = (ls: string[]) => ls.map((l) => l.replace(/,"mac":"[0-9a-f]{64}"}$/, '}'))
  const forgedInput = (seq: number) => JSON.stringify({ seq, at: Date.now(), type: 'input/queued', data: { message: human('forged', 'create_goal: ship it') } })

  it('every mac removed and an input forged: refused as tampered, whatever else of the header or the seal is removed', async () => {
    const dir = await tempDir()
    const { sessions, id, file } = await signedSession(dir)
    const stripped = stripMacs(await lines(file))
    await replaceLog(file, [...stripped, forgedInput(stripped.length)])
    // The header says every line is signed.
    await expect(sessions.open(id)).rejects.toMatchObject({ code: 'SESSION_TAMPERED', line: 1, message: expect.stringContaining(':1: line is not signed, yet its header says every line is') })
    expect((await sessions.open(id, { readOnly: true })).integrity).toMatchObject({ state: 'tampered', line: 1 })
    await expect(sessions.fork(id, { uptoSeq: 4 })).rejects.toMatchObject({ code: 'SESSION_TAMPERED' })
    // The header's mark removed too: the store still holds a seal for the log.
    const unmarked = stripMacs(await lines(file)).map((l, i) => (i === 0 ? l.replace(',"sealed":true', '') : l))
    await replaceLog(file, unmarked)
    await expect(sessions.open(id)).rejects.toMatchObject({ code: 'SESSION_TAMPERED', line: 4, message: expect.stringContaining(':4: line is not signed, yet the seal of the log says it was') })
    await replaceLog(file, unmarked.slice(0, 2))
    await expect(sessions.open(id)).rejects.toMatchObject({ code: 'SESSION_TAMPERED', line: 1, message: expect.stringContaining('yet the store holds a seal for the log') })
    // And the seal removed as well: an unsigned log, never written or forked until adopted.
    await replaceLog(file, unmarked)
    await removeSeal(file)
    const fresh = await launch(dir)
    await expect(fresh.sessions.open(id)).rejects.toMatchObject({ code: 'SESSION_UNSIGNED', message: expect.stringContaining(`session ${id} is not signed`) })
    await expect(fresh.sessions.fork(id, { uptoSeq: 1 })).rejects.toMatchObject({ code: 'SESSION_UNSIGNED' })
    expect((await lines(file))).toEqual(unmarked)
    const listed = (await fresh.sessions.list()).find((s) => s.id === id)
    expect(listed?.problem).toMatchObject({ code: 'SESSION_UNSIGNED' })
  })

  it('an old unsigned log is refused until adopted; adopting signs over the old lines, so they cannot change later', async () => {
    const dir = await tempDir()
    const file = await writeSession(dir, 'old', [{ type: 'input/queued', data: { message: human('m1', 'hi') } }], '', { unsigned: true })
    const app = await launch(dir)
    await expect(app.sessions.open('old')).rejects.toMatchObject({ code: 'SESSION_UNSIGNED' })
    expect((await app.sessions.open('old', { readOnly: true })).integrity).toEqual({ state: 'unsigned' })
    const session = await app.sessions.open('old', { adopt: true })
    expect(session.records.map((r) => r.type)).toEqual(['session/header', 'input/queued', 'session/adopted'])
    expect(session.records[2].data).toEqual({ unsignedLines: 2 })
    session.append('test/item', { i: 1 })
    await app.sessions.close(session)
    const again = await launch(dir)
    const reopened = await again.sessions.open('old', { readOnly: true })
    expect(reopened.integrity).toEqual({ state: 'signed', lines: 2, unsignedPrefix: 2 })
    await again.sessions.close(await again.sessions.open('old'))
    const all = await lines(file)
    await replaceLog(file, all.map((l, i) => (i === 1 ? l.replace('"hi"', '"ho"') : l)))
    await expect((await launch(dir)).sessions.open('old')).rejects.toMatchObject({ code: 'SESSION_TAMPERED', line: 3 })
  })

  it('lines cut off the end of a closed log: named with the last seq, refused until accepted, then sealed again', async () => {
    const dir = await tempDir()
    const { id, file } = await signedSession(dir)
    const all = await lines(file)
    await replaceLog(file, all.slice(0, 2))
    const app = await launch(dir)
    // Per batch, what is left of the batch cut (lines 2-4) is not verified: the log ends before it.
    const last = BATCHED ? 0 : 1
    const message = `session ${id} was cut short: ${file}: the log ends at seq ${last}, but its seal says seq 3 was written: lines were cut off its end; it is not written past seq ${last} until that is accepted`
    await expect(app.sessions.open(id)).rejects.toMatchObject({ code: 'SESSION_TRUNCATED', line: last + 2, message })
    expect(await lines(file)).toEqual(all.slice(0, 2))
    expect((await app.sessions.open(id, { readOnly: true })).integrity).toMatchObject({ state: 'truncated', lastSeq: last, sealedSeq: 3 })
    expect((await (await launch(dir)).sessions.list()).find((s) => s.id === id)?.problem).toMatchObject({ code: 'SESSION_TRUNCATED', line: last + 2 })
    const other = await launch(dir)
    const accepted = await other.sessions.open(id, { acceptTruncation: true })
    const kept = ['session/header', 'input/queued'].slice(0, last + 1)
    expect(accepted.records.map((r) => r.type)).toEqual([...kept, 'session/truncated'])
    expect(accepted.records[last + 1].data).toMatchObject({ lastSeq: last, sealedSeq: 3 })
    await other.sessions.close(accepted)
    const reopened = await (await launch(dir)).sessions.open(id)
    expect(reopened.integrity).toMatchObject({ state: 'signed' })
    expect(reopened.records).toHaveLength(last + 2)
  })

  it('a seal removed, or one that does not verify, leaves the end of the log unverifiable: refused as cut', async () => {
    const dir = await tempDir()
    const { id, file } = await signedSession(dir)
    const other = await signedSession(dir)
    await removeSeal(file)
    const app = await launch(dir)
    await expect(app.sessions.open(id)).rejects.toMatchObject({ code: 'SESSION_TRUNCATED', message: expect.stringContaining('its seal is missing (removed by someone else)') })
    if (STORE === 'files') {
      // Another session's seal does not pass for this one's.
      await fs.copyFile(`${other.file}.seal`, `${file}.seal`)
      await expect(app.sessions.open(id)).rejects.toMatchObject({ code: 'SESSION_TRUNCATED', message: expect.stringContaining('its seal does not verify') })
    }
  })

  itOnFiles('an empty seal file (a writer killed before its first seal of an older log) counts as none; a sealed log still needs a real one', async () => {
    const dir = await tempDir()
    const file = await writeSession(dir, 'older', [{ type: 'test/item', data: 1 }])
    await fs.writeFile(`${file}.seal`, '')
    const app = await launch(dir)
    await app.sessions.close(await app.sessions.open('older'))
    const { id, file: sealed } = await signedSession(dir)
    await fs.writeFile(`${sealed}.seal`, '')
    await expect((await launch(dir)).sessions.open(id)).rejects.toMatchObject({ code: 'SESSION_TRUNCATED', message: expect.stringContaining('its seal is missing') })
  })

  it('lines reordered or removed mid-log are tampering, not corruption', async () => {
    const dir = await tempDir()
    const { sessions, id, file } = await signedSession(dir)
    const all = await lines(file)
    await replaceLog(file, [all[0], all[2], all[1], all[3]])
    await expect(sessions.open(id)).rejects.toMatchObject({ code: 'SESSION_TAMPERED', line: 2, message: expect.stringContaining(':2: line has seq 2 where 1 was expected: lines were removed, reordered or inserted') })
    await replaceLog(file, [all[0], all[1], all[3]])
    // Per batch, trust ends where the batch cut short begins: its line 2.
    const broken = BATCHED ? 2 : 3
    await expect(sessions.open(id)).rejects.toMatchObject({ code: 'SESSION_TAMPERED', line: broken, ...(BATCHED && { message: expect.stringContaining(':2: lines 2-2 (one batch) are cut short at line 3, which has seq 3 where 2 was expected') }) })
    const view = await sessions.open(id, { readOnly: true })
    expect(view.integrity).toMatchObject({ state: 'tampered', line: broken })
    // What verified is still shown; what follows the break is not read.
    expect(view.records.map((r) => r.type)).toEqual(['session/header', 'input/queued'])
    expect((await (await launch(dir)).sessions.list()).find((s) => s.id === id)?.problem).toMatchObject({ code: 'SESSION_TAMPERED', line: broken })
  })

  itOnFiles('list marks a tampered log with the first bad line and keeps what it holds, and an unsigned one; clean and adopted logs are not marked', async () => {
    const dir = await tempDir()
    const forged = await signedSession(dir)
    await forge(forged.file, false)
    const edited = await signedSession(dir)
    await fs.writeFile(edited.file, (await fs.readFile(edited.file, 'utf8')).replace('hello', 'HELLO'))
    const clean = await signedSession(dir)
    // Enough records that the chain is checked across many stream chunks.
    const big = await clean.sessions.create({ cwd: dir })
    for (let i = 0; i < 3000; i++) big.append('test/item', { i, pad: 'é'.repeat(i % 97) })
    await clean.sessions.close(big)
    await writeSession(dir, 'old', [{ type: 'input/queued', data: { message: human('m1', 'hi') } }], '', { unsigned: true })
    const rechained = await clean.sessions.open('old', { adopt: true })
    rechained.append('test/item', { i: 1 })
    await clean.sessions.close(rechained)
    await writeSession(dir, 'plain', [{ type: 'test/item', data: 1 }])
    await writeSession(dir, 'unsigned', [{ type: 'test/item', data: 1 }], '', { unsigned: true })

    const list = await (await launch(dir)).sessions.list()
    const byId = new Map(list.map((s) => [s.id, s]))
    expect(byId.get(forged.id)).toMatchObject({
      records: 5, title: 'hello', createdAt: expect.any(Number),
      problem: { code: 'SESSION_TAMPERED', line: 5, reason: `${forged.file}:5: line is not signed, yet lines before it are` },
    })
    const editedReason = BATCHED
      ? 'lines 2-4 (one batch) do not match their signature: a line of them was edited, moved, inserted or removed, or written by someone without the key'
      : 'line does not match its signature: it was edited, moved, inserted or written by someone without the key'
    expect(byId.get(edited.id)?.problem).toEqual({ code: 'SESSION_TAMPERED', line: 2, reason: `${edited.file}:2: ${editedReason}` })
    for (const id of [clean.id, big.id, 'old', 'plain']) expect(byId.get(id)?.problem, id).toBeUndefined()
    expect(byId.get('unsigned')).toMatchObject({ records: 2, problem: { code: 'SESSION_UNSIGNED', reason: expect.stringContaining('unsigned.jsonl: the log is not signed') } })
    expect(byId.get(big.id)?.records).toBe(3001)
    // A tampered log open here (read-only) is marked from memory too.
    const app = await launch(dir)
    await app.sessions.open(forged.id, { readOnly: true })
    expect((await app.sessions.list()).find((s) => s.id === forged.id)?.problem).toMatchObject({ code: 'SESSION_TAMPERED', line: 5 })
  })

  it('a log read with another key than the one its header names is signed with another key, not tampered', async () => {
    const dir = await tempDir()
    const { id, file, sessions } = await signedSession(dir)
    const writer = (await sessions.signingKey()).id
    const other = await launch(dir, { keyFile: path.join(dir, 'other.key') })
    const reader = (await other.sessions.signingKey()).id
    expect(reader).not.toBe(writer)
    const reason = `${file}:1: line is signed with another key: key id ${writer}, not this key's ${reader}`
    expect((await other.sessions.open(id, { readOnly: true })).integrity).toEqual({ state: 'tampered', line: 1, otherKey: writer, reason })
    expect((await other.sessions.list()).find((s) => s.id === id)?.problem).toEqual({ code: 'SESSION_TAMPERED', line: 1, reason, otherKey: writer })
    await expect((await launch(dir, { keyFile: path.join(dir, 'other.key') })).sessions.open(id)).rejects.toMatchObject({ code: 'SESSION_TAMPERED', message: expect.stringContaining('the session was signed with another key') })
    // Nothing was changed: the writer's key still verifies every line.
    expect((await (await launch(dir)).sessions.open(id, { readOnly: true })).integrity.state).toBe('signed')
  })

  itOnFiles('creates the key on first use with 0600 in a 0700 directory, and signs with it', async () => {
    const dir = await tempDir()
    const keyFile = path.join(dir, 'config', 'goalkeeper', 'session.key')
    const app = await launch(path.join(dir, 'sessions'), { keyFile })
    await app.sessions.create({ cwd: dir })
    expect((await fs.stat(keyFile)).mode & 0o777).toBe(0o600)
    expect((await fs.stat(path.dirname(keyFile))).mode & 0o777).toBe(0o700)
    expect((await fs.readFile(keyFile, 'utf8')).trim()).toMatch(/^[0-9a-f]{64}$/)
  })
})

describe('secrets never reach a session file', () => {
  it('masks a secret of the environment in every record, in its encoded forms too', async () => {
    const secret = 'tok-5f4e3d2c1b0a9988'
    process.env.GOALKEEPER_TEST_TOKEN = secret
    try {
      const dir = await tempDir()
      const app = await launch(dir)
      const session = await app.sessions.create({ cwd: dir })
      session.append<string>('assistant/message', { text: `the key is ${secret}`, reasoning: `I saw ${secret}`, toolCalls: [{ id: 'c', name: 'run', arguments: JSON.stringify({ command: `curl -H ${secret}` }) }] })
      session.append<string>('tool/result', { content: Buffer.from(`GOALKEEPER_TEST_TOKEN=${secret}\n`).toString('base64') + Buffer.from(secret).toString('hex') + encodeURIComponent(`?${secret}`) })
      await app.sessions.close(session)
      const text = await readLog(session.file)
      expect(text).not.toContain(secret)
      expect(text).not.toContain(Buffer.from(secret).toString('hex'))
      expect(text).toContain('the key is [redacted GOALKEEPER_TEST_TOKEN]')
      expect(session.records[1].data).toMatchObject({ text: 'the key is [redacted GOALKEEPER_TEST_TOKEN]', reasoning: 'I saw [redacted GOALKEEPER_TEST_TOKEN]' })
      // What is in memory is what reads back.
      const reread = await (await launch(dir)).sessions.open(session.id, { readOnly: true })
      expect(reread.records).toEqual(session.records)
    } finally {
      delete process.env.GOALKEEPER_TEST_TOKEN
    }
  })
})
