// Contract tests of the checkpoint index, on files; postgres/checkpoint-index.test.ts runs them on PostgreSQL.
import { describe, expect, it } from 'vitest'
import type { Session, SessionService } from '@goalkeeper/session'
import { loadKey, signCheckpointEntry, Signer } from '../src/integrity.ts'
import {
  appsPerTest, BATCHED, logSize, readCheckpointIndex, readLines, readLog, replaceLog, tempDir, TEST_KEY, writeCheckpointIndex,
} from './helpers.ts'

const launch = appsPerTest()

/** A closed session of 40 items with checkpoints after items 10 and 30 (each holding the count so far). */
async function withCheckpoints(sessions: SessionService, dir: string): Promise<{ id: string; file: string; last: number }> {
  let count = 0
  const off = sessions.provideCheckpoint('counter', () => ({ count }))
  const session = await sessions.create({ cwd: dir })
  let last = 0
  for (let i = 1; i <= 40; i++) {
    session.append('test/item', { i })
    count++
    if (i === 10 || i === 30) last = sessions.checkpoint(session, 'interval')!.seq
  }
  await sessions.close(session)
  off()
  return { id: session.id, file: session.file, last }
}

const types = (session: Session) => session.records.map((record) => record.type)

describe('the checkpoint index', () => {
  it('opens a session for writing from its last checkpoint, and appends after its last record', async () => {
    const dir = await tempDir()
    const { sessions } = await launch(dir)
    const { id, file, last } = await withCheckpoints(sessions, dir)
    const session = await sessions.open(id)
    expect(session.firstSeq).toBe(last)
    expect(session.records[0]).toMatchObject({ seq: last, type: 'session/checkpoint', data: { reason: 'interval', parts: { counter: { count: 30 } } } })
    expect(session.records.map((record) => record.seq)).toEqual(Array.from({ length: 11 }, (_, i) => last + i))
    expect(session.header.id).toBe(id)
    expect(session.integrity).toEqual({ state: 'signed', lines: 43, unsignedPrefix: 0 })
    expect(session.append('test/item', { i: 41 }).seq).toBe(43)
    await sessions.close(session)
    // Read whole, every line verifies and nothing is missing.
    const whole = await sessions.open(id, { readOnly: true })
    expect(whole.firstSeq).toBe(0)
    expect(whole.integrity).toEqual({ state: 'signed', lines: 44, unsignedPrefix: 0 })
    expect(whole.records.map((record) => record.seq)).toEqual(Array.from({ length: 44 }, (_, i) => i))
    expect((await readLines(file)).length).toBe(44)
    // Per batch, each checkpoint starts a batch of its own, so that reading can begin there.
    const text = (await readLog(file)).trimEnd().split('\n')
    const signed = text.flatMap((line, i) => (line.includes('"mac":') ? [i] : []))
    expect(signed).toEqual(BATCHED ? [0, 1, 11, last, 43] : text.map((_, i) => i))
  })

  it('ignores an index that does not verify, says so, reads the whole log and writes the index again', async () => {
    const dir = await tempDir()
    const { sessions, logs } = await launch(dir)
    const { id, file, last } = await withCheckpoints(sessions, dir)
    const good = (await readCheckpointIndex(file))!
    // Pointed at the first checkpoint instead: its signature no longer matches.
    const first = (await readLines(file)).find((record) => record.type === 'session/checkpoint')!
    await writeCheckpointIndex(file, good.replace(`"seq":${last}`, `"seq":${first.seq}`))
    const session = await sessions.open(id)
    expect(session.firstSeq).toBe(0)
    expect(session.records.length).toBe(43)
    expect(logs.some((log) => log.text.includes(`${id}: checkpoint index ignored (it does not verify)`))).toBe(true)
    expect(logs.some((log) => log.text.includes(`${id}: checkpoint index rebuilt (last checkpoint at seq ${last})`))).toBe(true)
    await sessions.close(session)
    expect(await readCheckpointIndex(file)).toBe(good)
    expect((await sessions.open(id)).firstSeq).toBe(last)
  })

  it('ignores the index of another session', async () => {
    const dir = await tempDir()
    const { sessions, logs } = await launch(dir)
    const a = await withCheckpoints(sessions, dir)
    const b = await withCheckpoints(sessions, dir)
    const own = await readCheckpointIndex(b.file)
    await writeCheckpointIndex(b.file, (await readCheckpointIndex(a.file))!)
    const session = await sessions.open(b.id)
    expect(session.firstSeq).toBe(0)
    expect(logs.some((log) => log.text.includes(`${b.id}: checkpoint index ignored (it does not verify)`))).toBe(true)
    expect(logs.some((log) => log.text.includes(`${b.id}: checkpoint index rebuilt (last checkpoint at seq ${b.last})`))).toBe(true)
    await sessions.close(session)
    expect(await readCheckpointIndex(b.file)).toBe(own)
  })

  it('ignores a signed index that points past the end of the log, says so and writes the right one', async () => {
    const dir = await tempDir()
    const { sessions, logs } = await launch(dir)
    const { id, file, last } = await withCheckpoints(sessions, dir)
    const good = (await readCheckpointIndex(file))!
    const entry = JSON.parse(good)
    // Made with the key itself (as a later state of the log would have it): only its offset is wrong.
    const signer = new Signer(await loadKey(TEST_KEY))
    await writeCheckpointIndex(file, signCheckpointEntry(signer, id, { ...entry, offset: (await logSize(file)) + 100 }))
    const session = await sessions.open(id)
    expect(session.firstSeq).toBe(0)
    expect(session.records.length).toBe(43)
    expect(logs.some((log) => log.text.includes(`${id}: checkpoint index ignored (it points past the end of the log)`))).toBe(true)
    expect(logs.some((log) => log.text.includes(`${id}: checkpoint index rebuilt (last checkpoint at seq ${last})`))).toBe(true)
    await sessions.close(session)
    expect(await readCheckpointIndex(file)).toBe(good)
    expect((await sessions.open(id)).firstSeq).toBe(last)
  })

  it('refuses a log edited after its checkpoint, naming the line, as a whole read does', async () => {
    const dir = await tempDir()
    const { sessions, logs } = await launch(dir)
    const { id, file, last } = await withCheckpoints(sessions, dir)
    const lines = (await readLog(file)).trimEnd().split('\n')
    lines[last + 3] = lines[last + 3].replace('"i":33', '"i":99')
    await replaceLog(file, lines)
    // Per batch, located to the batch the checkpoint starts.
    await expect(sessions.open(id)).rejects.toMatchObject({ code: 'SESSION_TAMPERED', line: BATCHED ? last + 1 : last + 4 })
    expect(logs.some((log) => log.text.includes(`${id}: checkpoint index ignored (the log from it is tampered)`))).toBe(true)
  })

  it('refuses a log cut short before its last checkpoint: the stale index is ignored and the cut is found', async () => {
    const dir = await tempDir()
    const { sessions } = await launch(dir)
    const { id, file, last } = await withCheckpoints(sessions, dir)
    const lines = (await readLog(file)).trimEnd().split('\n')
    await replaceLog(file, lines.slice(0, last - 5))
    await expect(sessions.open(id)).rejects.toMatchObject({ code: 'SESSION_TRUNCATED' })
  })

  it('does not read what comes before the checkpoint when opening for writing; a whole read still finds an edit there', async () => {
    const dir = await tempDir()
    const { sessions } = await launch(dir)
    const { id, file, last } = await withCheckpoints(sessions, dir)
    const lines = (await readLog(file)).trimEnd().split('\n')
    lines[3] = lines[3].replace('"i":3', '"i":7')
    await replaceLog(file, lines)
    const whole = await sessions.open(id, { readOnly: true })
    expect(whole.integrity).toMatchObject({ state: 'tampered', line: BATCHED ? 2 : 4 })
    await sessions.close(whole)
    const tail = await sessions.open(id, { readOnly: true, from: 'checkpoint' })
    expect(tail.firstSeq).toBe(last)
    expect(tail.integrity).toMatchObject({ state: 'signed' })
  })
})

describe('a session opened from its last checkpoint, in the listing', () => {
  it('keeps its title, its record count and its creation time though it holds only the tail', async () => {
    const dir = await tempDir()
    const { sessions } = await launch(dir)
    const session = await sessions.create({ cwd: dir })
    session.append('user/message', { id: 'u1', content: [{ type: 'text', text: 'Fix the parser' }], source: { kind: 'human' } })
    for (let i = 1; i <= 20; i++) session.append('test/item', { i })
    sessions.checkpoint(session, 'interval')
    session.append('test/item', { i: 21 })
    await sessions.close(session)

    const tail = await sessions.open(session.id)
    expect(tail.firstSeq).toBeGreaterThan(0)
    tail.append('test/item', { i: 22 })
    await sessions.close(tail)
    const [listed] = (await sessions.recent({ limit: 5 })).sessions
    const whole = await sessions.open(session.id, { readOnly: true })
    expect(listed).toMatchObject({ id: session.id, title: 'Fix the parser', records: whole.records.length, createdAt: whole.header.createdAt })
    expect(listed!.problem).toBeUndefined()
  })
})
