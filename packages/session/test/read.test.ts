import { describe, expect, it } from 'vitest'
import type { Integrity, SessionRecord } from '@goalkeeper/session'
import { appsPerTest, human, readLog, replaceLog, signingLine, tempDir } from './helpers.ts'

const launch = appsPerTest()
const PAD = 'x'.repeat(300)

/** A closed log of `turns` turns of 4 records of about 400 bytes each, each turn flushed (written) on its own. */
async function longLog(dir: string, turns: number) {
  const app = await launch(dir)
  const session = await app.sessions.create({ cwd: '/work' })
  for (let turn = 1; turn <= turns; turn++) {
    session.append('turn/start', { turn })
    session.append('user/message', human(`m${turn}`, `question ${turn} ${PAD}`))
    session.append('assistant/message', { turn, step: 1, text: `answer ${turn} ${PAD}`, toolCalls: [] })
    session.append('turn/end', { turn, outcome: { kind: 'completed' } })
    if (turn % 50 === 0) await app.sessions.flush(session)
  }
  await app.sessions.close(session)
  return { id: session.id, file: session.file }
}

describe('read (a log as it streams)', () => {
  it('hands on every record of a log larger than an open may hold, holding one chunk of them at a time', async () => {
    const dir = await tempDir()
    // 4,000 turns: 16,001 records, over 4 MiB; an open may hold 64 KiB of it.
    const { id } = await longLog(dir, 4000)
    const app = await launch(dir, { maxOpenBytes: 1 << 16 })
    await expect(app.sessions.open(id, { readOnly: true })).rejects.toMatchObject({ code: 'SESSION_TOO_LARGE' })
    const reading = await app.sessions.read(id)
    expect(reading.size).toBeGreaterThan(4 * 2 ** 20)
    let count = 0
    let last = -1
    for await (const record of reading) {
      expect(record.seq).toBe(last + 1)
      last = record.seq
      count++
    }
    expect(count).toBe(16001)
    expect(reading.integrity).toEqual({ state: 'signed', lines: 16001, unsignedPrefix: 0 })
    expect(reading.header).toMatchObject({ id, cwd: '/work' })
    // Never more than a chunk's worth (1 MiB: about 4,000 of these records, and a batch of 200) held at once.
    expect(reading.peakHeld).toBeGreaterThan(0)
    expect(reading.peakHeld).toBeLessThan(4500)
    // Read again: the same records, the same verdict.
    let again = 0
    for await (const _ of reading) again++
    expect(again).toBe(16001)
    expect(reading.integrity).toMatchObject({ state: 'signed', lines: 16001 })
  })

  it('a log changed in the middle: tampered is known before the first record from the bad line is handed on', async () => {
    const dir = await tempDir()
    const { id, file } = await longLog(dir, 100)
    const lines = (await readLog(file)).slice(0, -1).split('\n')
    lines[202] = lines[202].replace('question 51', 'question 99')
    await replaceLog(file, lines)
    const bad = signingLine(lines, 202)
    const app = await launch(dir)
    const reading = await app.sessions.read(id)
    const seen: { seq: number; integrity: Integrity }[] = []
    for await (const record of reading) seen.push({ seq: record.seq, integrity: reading.integrity })
    expect(seen).toHaveLength(401)
    const marked = (entry: { seq: number; integrity: Integrity }) => entry.integrity.state === 'tampered' && entry.seq >= entry.integrity.line - 1
    expect(seen.filter(marked).map((entry) => entry.seq)).toEqual(seen.filter((entry) => entry.seq >= bad).map((entry) => entry.seq))
    expect(reading.integrity).toMatchObject({ state: 'tampered', line: bad + 1 })
    // What a holding open says of it.
    expect((await app.sessions.open(id, { readOnly: true })).integrity).toEqual(reading.integrity)
  })

  it('from the checkpoint: the header read apart, records from the last checkpoint on', async () => {
    const dir = await tempDir()
    const app = await launch(dir)
    const session = await app.sessions.create({ cwd: '/work' })
    for (let turn = 1; turn <= 3; turn++) {
      session.append('turn/start', { turn })
      session.append('turn/end', { turn, outcome: { kind: 'completed' } })
      app.sessions.checkpoint(session, 'interval')
      await app.sessions.flush(session)
    }
    session.append('turn/start', { turn: 4 })
    await app.sessions.close(session)
    const reading = await (await launch(dir)).sessions.read(session.id, { from: 'checkpoint' })
    expect(reading.header).toMatchObject({ id: session.id })
    const records: SessionRecord[] = []
    for await (const record of reading) records.push(record)
    expect(records.map((r) => [r.seq, r.type])).toEqual([[9, 'session/checkpoint'], [10, 'turn/start']])
    expect(reading.integrity).toMatchObject({ state: 'signed' })
  })
})
