import { describe, expect, it } from 'vitest'
import { appsPerTest, human, LOG_VERSION, readLines, tempDir } from './helpers.ts'

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
