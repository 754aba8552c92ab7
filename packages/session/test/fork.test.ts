import { describe, expect, it } from 'vitest'
import { appsPerTest, human, LOG_VERSION, readLines, readLog, replaceLog, signingLine, tempDir } from './helpers.ts'

const launch = appsPerTest()

async function source(dir: string) {
  let now = 1_000
  const app = await launch(dir, { clock: () => (now += 10) })
  const session = await app.sessions.create({ cwd: '/work/src' })
  session.append('input/queued', { message: human('m1', 'first') }) // 1
  session.append('turn/start', { turn: 1 }) // 2
  session.append('user/message', human('m1', 'first')) // 3
  session.append('step/start', { turn: 1, step: 1 }) // 4
  session.append('assistant/message', { turn: 1, step: 1, text: '', toolCalls: [{ id: 'c1', name: 'read', arguments: '{}' }] }) // 5
  session.append('tool/call', { turn: 1, step: 1, callId: 'c1', name: 'read', arguments: '{}' }) // 6
  session.append('tool/result', { turn: 1, step: 1, callId: 'c1', ok: true, content: 'ok' }) // 7
  session.append('step/end', { turn: 1, step: 1 }) // 8
  session.append('turn/end', { turn: 1, outcome: { kind: 'completed' } }) // 9
  session.append('plugin/note', { any: 'thing' }) // 10
  return { ...app, session, clock: () => now }
}

describe('fork', () => {
  it('copies records 1..uptoSeq under a header naming the parent', async () => {
    const dir = await tempDir()
    const { sessions, session, clock } = await source(dir)
    const fork = await sessions.fork(session.id, { uptoSeq: 10 })
    expect(fork.id).not.toBe(session.id)
    expect(fork.header).toEqual({ version: LOG_VERSION, id: fork.id, createdAt: expect.any(Number), cwd: '/work/src', parent: { id: session.id, seq: 10 }, sealed: true, keyId: (await sessions.signingKey()).id })
    expect(fork.header.createdAt).toBeLessThanOrEqual(clock())
    expect(fork.records.slice(1).map(({ type, data }) => ({ type, data }))).toEqual(session.records.slice(1).map(({ type, data }) => ({ type, data })))
    expect(fork.records.map((r) => r.seq)).toEqual([...Array(11).keys()])
    expect(fork.records.every((r) => r.at === fork.header.createdAt)).toBe(true)
    expect(fork.repair).toBeUndefined()
    expect(await readLines(fork.file)).toEqual(fork.records)
    // Appending to the fork goes on from its own last seq and leaves the parent alone.
    expect(fork.append('x', {}).seq).toBe(11)
    expect(session.records).toHaveLength(11)
  })

  it('closes the turn open at the cut exactly like crash repair', async () => {
    const dir = await tempDir()
    const { sessions, session } = await source(dir)
    const fork = await sessions.fork(session.id, { uptoSeq: 6, cwd: '/elsewhere' })
    expect(fork.header.cwd).toBe('/elsewhere')
    expect(fork.records.slice(7).map((r) => [r.seq, r.type, r.data])).toEqual([
      [7, 'tool/result', expect.objectContaining({ callId: 'c1', ok: false, error: expect.objectContaining({ code: 'INTERRUPTED' }) })],
      [8, 'step/end', { turn: 1, step: 1 }],
      [9, 'turn/end', { turn: 1, outcome: { kind: 'interrupted' } }],
    ])
    expect(await readLines(fork.file)).toEqual(fork.records)
  })

  it('forks a session that is not open, as on disk, and persists the fork', async () => {
    const dir = await tempDir()
    const first = await source(dir)
    await first.sessions.close(first.session)
    const other = await launch(dir)
    const fork = await other.sessions.fork(first.session.id, { uptoSeq: 3 })
    expect(fork.records.map((r) => r.type)).toEqual(['session/header', 'input/queued', 'turn/start', 'user/message', 'turn/end'])
    await other.sessions.close(fork)
    const reopened = await other.sessions.open(fork.id)
    expect(reopened.records).toEqual(fork.records)
    expect(reopened.repair).toBeUndefined()
    expect((await other.sessions.list()).find((s) => s.id === fork.id)?.parent).toEqual({ id: first.session.id, seq: 3 })
  })

  it('refuses a seq outside the source', async () => {
    const dir = await tempDir()
    const { sessions, session } = await source(dir)
    for (const uptoSeq of [-1, 11, 1.5, Number.NaN]) {
      await expect(sessions.fork(session.id, { uptoSeq })).rejects.toMatchObject({ code: 'SESSION_BAD_SEQ' })
    }
    expect(await sessions.fork(session.id, { uptoSeq: 0 }).then((f) => f.records.length)).toBe(1)
  })
})

/**
 * A log with checkpoints at seqs 5, 10 and 15 (19 records), each turn flushed on its own (the session then
 * lets go of what precedes each checkpoint), or all at the end (`inMemory`: it holds its whole log).
 */
async function withCheckpoints(dir: string, inMemory = false) {
  const app = await launch(dir)
  app.sessions.provideCheckpoint('test', (session) => ({ before: session.records.at(-1)!.seq }))
  const session = await app.sessions.create({ cwd: '/work/src' })
  for (let turn = 1; turn <= 4; turn++) {
    session.append('input/queued', { message: human(`m${turn}`, `question ${turn}`) })
    session.append('turn/start', { turn })
    session.append('user/message', human(`m${turn}`, `question ${turn}`))
    session.append('turn/end', { turn, outcome: { kind: 'completed' } })
    if (turn < 4) app.sessions.checkpoint(session, 'interval')
    if (!inMemory) await app.sessions.flush(session)
  }
  await app.sessions.flush(session)
  expect((await readLines(session.file)).filter((r) => r.type === 'session/checkpoint').map((r) => r.seq)).toEqual([5, 10, 15])
  return { ...app, session }
}

const typesAndData = (records: readonly { type: string; data: unknown }[]) => records.map(({ type, data }) => ({ type, data }))

describe('fork of a log with checkpoints', () => {
  it('starts at the last checkpoint at or before the seq, keeps the parent\'s seqs and is held as the parent opened from there', async () => {
    const dir = await tempDir()
    const { sessions, session } = await withCheckpoints(dir)
    await sessions.close(session)
    const source = await readLines(session.file)
    const other = await launch(dir)
    const fork = await other.sessions.fork(session.id, { uptoSeq: 17 })
    expect(fork.header.parent).toEqual({ id: session.id, seq: 17, from: 15 })
    expect(fork.firstSeq).toBe(15)
    // The checkpoint and what follows it up to the seq, then the turn open at the cut closed as crash repair does.
    expect(fork.records.map((r) => r.seq)).toEqual([15, 16, 17, 18])
    expect(typesAndData(fork.records.slice(0, 3))).toEqual(typesAndData(source.slice(15, 18)))
    expect(fork.records[3]).toMatchObject({ type: 'turn/end', data: { turn: 4, outcome: { kind: 'interrupted' } } })
    // On disk: the header, then the checkpoint with its seq.
    expect((await readLines(fork.file)).map((r) => r.seq)).toEqual([0, 15, 16, 17, 18])
    expect(fork.append('x', {}).seq).toBe(19)
    await other.sessions.close(fork)
    // Opened again (from its index, or read whole), read-only or not, it is held the same way.
    const third = await launch(dir)
    for (const options of [{}, { from: 'start' as const }, { readOnly: true }]) {
      const reopened = await third.sessions.open(fork.id, options)
      expect(reopened.firstSeq).toBe(15)
      expect(reopened.header.parent).toEqual({ id: session.id, seq: 17, from: 15 })
      expect(reopened.records.map((r) => r.seq)).toEqual([15, 16, 17, 18, 19])
      expect(reopened.integrity).toMatchObject({ state: 'signed' })
      expect(reopened.repair).toBeUndefined()
      await third.sessions.close(reopened)
    }
    const listed = (await third.sessions.list()).find((s) => s.id === fork.id)
    expect(listed).toMatchObject({ parent: { id: session.id, seq: 17, from: 15 }, records: 20, title: 'question 1' })
    expect(listed?.problem).toBeUndefined()
    // A fork of the fork starts at the same checkpoint; before it, the fork holds nothing to copy.
    const again = await third.sessions.fork(fork.id, { uptoSeq: 16 })
    expect(again.header.parent).toEqual({ id: fork.id, seq: 16, from: 15 })
    expect(again.records.map((r) => r.seq)).toEqual([15, 16])
    await expect(third.sessions.fork(fork.id, { uptoSeq: 12 })).rejects.toMatchObject({ code: 'SESSION_BAD_SEQ', message: expect.stringContaining('it holds seq 0 and seqs 15..19') })
  })

  it('from a session open here holding its whole log, the same window', async () => {
    const dir = await tempDir()
    const { sessions, session } = await withCheckpoints(dir, true)
    expect(session.firstSeq).toBe(0)
    const fork = await sessions.fork(session.id, { uptoSeq: 10 })
    expect(fork.header.parent).toEqual({ id: session.id, seq: 10, from: 10 })
    expect(typesAndData(fork.records)).toEqual(typesAndData(session.records.slice(10, 11)))
    expect(fork.records[0]).toMatchObject({ seq: 10, type: 'session/checkpoint', data: { parts: { test: { before: 9 } } } })
  })

  it('before the first checkpoint, copies from the header as before', async () => {
    const dir = await tempDir()
    const { sessions, session } = await withCheckpoints(dir)
    await sessions.close(session)
    const other = await launch(dir)
    const fork = await other.sessions.fork(session.id, { uptoSeq: 4 })
    expect(fork.header.parent).toEqual({ id: session.id, seq: 4 })
    expect(fork.firstSeq).toBe(0)
    expect(fork.records.map((r) => r.seq)).toEqual([0, 1, 2, 3, 4])
  })

  it('of a log changed after a checkpoint: up to the last verified line, from that checkpoint', async () => {
    const dir = await tempDir()
    const { sessions, session } = await withCheckpoints(dir)
    await sessions.close(session)
    const lines = (await readLog(session.file)).slice(0, -1).split('\n')
    // The text of turn 3's prompt edited: located to its line (version 1) or to the batch of its turn (version 2).
    lines[13] = lines[13].replace('question 3', 'question X')
    await replaceLog(session.file, lines)
    const bad = signingLine(lines, 13)
    const other = await launch(dir)
    await expect(other.sessions.fork(session.id, { uptoSeq: bad })).rejects.toMatchObject({ code: 'SESSION_TAMPERED', line: bad + 1 })
    const fork = await other.sessions.fork(session.id, { uptoSeq: bad - 1 })
    expect(fork.header.parent).toEqual({ id: session.id, seq: bad - 1, from: 10 })
    expect(fork.integrity).toMatchObject({ state: 'signed' })
  })
})
