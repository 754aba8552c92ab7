// A session being written lets go of what precedes its last durable checkpoint once the next turn starts:
// what it holds, and what maxSessionBytes counts, is what came since, so a session of days is never full.
import fs from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { type Session, type SessionService, nextSeqOf, recordsSince } from '@goalkeeper/session'
import { appsPerTest, BATCHED, describeOnFiles, logSize, readCheckpointIndex, readLog, replaceLog, signingLine, tempDir } from './helpers.ts'

const launch = appsPerTest()
const LIMIT = 1 << 16
const text = 'x'.repeat(500)
const ITEMS = 6

/** One turn of `ITEMS` items, and a checkpoint after it when one is due (and `checkpoints`). */
function turn(sessions: SessionService, session: Session, number: number, counter: { count: number }, checkpoints = true) {
  session.append('turn/start', { turn: number })
  for (let i = 0; i < ITEMS; i++) session.append('test/item', { i: counter.count++, text })
  session.append('turn/end', { turn: number, outcome: { kind: 'completed' } })
  if (checkpoints && sessions.checkpointDue(session)) sessions.checkpoint(session, 'interval')
}

describe('a live session past its checkpoints', () => {
  it('holds only what came since its last checkpoint, and writes several times maxSessionBytes without filling up', async () => {
    const dir = await tempDir()
    const { sessions, logs } = await launch(dir, { maxSessionBytes: LIMIT, checkpointEvery: 20 })
    const counter = { count: 0 }
    sessions.provideCheckpoint('counter', () => ({ count: counter.count }))
    const session = await sessions.create({ cwd: dir })
    let most = 0
    let turns = 0
    while ((await logSize(session.file)) < 5 * LIMIT) {
      turn(sessions, session, ++turns, counter)
      await sessions.flush(session)
      most = Math.max(most, session.records.length)
    }
    // At most a checkpoint's worth of records, the turn that passed it and the checkpoint.
    expect(most).toBeLessThanOrEqual(20 + 2 * (ITEMS + 2) + 1)
    expect(session.firstSeq).toBeGreaterThan(0)
    expect(session.records[0].type).toBe('session/checkpoint')
    expect(session.records.every((record, index) => record.seq === session.firstSeq + index)).toBe(true)
    expect(session.header.id).toBe(session.id)
    expect(logs.filter((log) => log.text.includes('SESSION_FULL') || log.text.includes('size limit'))).toEqual([])

    // A turn that ends without a checkpoint (the loop's last may have ended with one), then one taken here.
    turn(sessions, session, ++turns, counter, false)
    // The last turn stays readable until the next one starts: a command prints its answer from it.
    const checkpoint = sessions.checkpoint(session, 'interval')!
    await sessions.flush(session)
    const before = session.firstSeq
    expect(before).toBeLessThan(checkpoint.seq)
    expect(recordsSince(session, checkpoint.seq - 1)[0]).toMatchObject({ type: 'turn/end', data: { turn: turns } })
    session.append('turn/start', { turn: ++turns })
    expect(session.firstSeq).toBe(checkpoint.seq)
    expect(session.records.map((record) => record.type)).toEqual(['session/checkpoint', 'turn/start'])
    expect(nextSeqOf(session)).toBe(checkpoint.seq + 2)
    // What was let go of is skipped by a reader that had not got to it.
    expect(recordsSince(session, before)).toBe(session.records)
    session.append('turn/end', { turn: turns, outcome: { kind: 'completed' } })

    // A fork of the live session still copies the whole log (and closes the turn its cut left open).
    const fork = await sessions.fork(session.id, { uptoSeq: 5 })
    expect(fork.records.slice(1, 6).map((record) => record.type)).toEqual(['turn/start', ...Array(4).fill('test/item')])
    expect(fork.records.slice(2, 6).map((record) => record.data)).toEqual([0, 1, 2, 3].map((i) => ({ i, text })))
    await sessions.close(fork)
    const last = nextSeqOf(session)
    await sessions.close(session)
    // What it holds of the log starts at the checkpoint's byte, where the index places it (on version 2 known
    // once the writer signed the batches before it: appended, the checkpoint was counted without their macs).
    const index = JSON.parse((await readCheckpointIndex(session.file))!)
    expect(index.seq).toBe(checkpoint.seq)
    expect((session as unknown as { base: number }).base).toBe(index.offset)

    // On disk: every record, every line verifies, and nothing says the log was full.
    const whole = await sessions.open(session.id, { readOnly: true })
    expect(whole.integrity).toMatchObject({ state: 'signed', lines: last })
    expect(whole.records.map((record) => record.seq)).toEqual(Array.from({ length: last }, (_, seq) => seq))
    expect(whole.records.some((record) => record.type === 'session/full')).toBe(false)
    expect(whole.records.filter((record) => record.type === 'test/item')).toHaveLength(counter.count)
    await sessions.close(whole)
    // Opened again for writing, it starts at the checkpoint the live session last held from.
    const again = await sessions.open(session.id)
    expect(again.firstSeq).toBe(checkpoint.seq)
    expect(again.records[0]).toMatchObject({ type: 'session/checkpoint', data: { parts: { counter: { count: counter.count } } } })
  })

  it('keeps everything while its last checkpoint is not durable, and lets go of nothing without one', async () => {
    const dir = await tempDir()
    const { sessions } = await launch(dir, { checkpointEvery: 0 })
    const session = await sessions.create({ cwd: dir })
    const counter = { count: 0 }
    for (let number = 1; number <= 3; number++) turn(sessions, session, number, counter)
    await sessions.flush(session)
    expect(session.firstSeq).toBe(0)
    // Written but not yet durable when the next turn starts: nothing goes.
    const checkpoint = sessions.checkpoint(session, 'compaction')!
    session.append('turn/start', { turn: 4 })
    expect(session.firstSeq).toBe(0)
    expect(session.records).toHaveLength(nextSeqOf(session))
    session.append('turn/end', { turn: 4, outcome: { kind: 'completed' } })
    await sessions.flush(session)
    session.append('turn/start', { turn: 5 })
    expect(session.firstSeq).toBe(checkpoint.seq)
  })
})

describeOnFiles('a read-only open of the last turns', () => {
  /**
   * A closed session of turns of ~100 KiB, each flushed (on version 2 a batch each), a checkpoint after turn
   * `at`; returns its id and the seqs of each turn's start.
   */
  async function written(sessions: SessionService, dir: string, turns: number, at: number) {
    const session = await sessions.create({ cwd: dir })
    const starts: number[] = []
    const counter = { count: 0 }
    for (let number = 1; number <= turns; number++) {
      starts.push(nextSeqOf(session))
      session.append('turn/start', { turn: number })
      for (let i = 0; i < 200; i++) session.append('test/item', { i: counter.count++, text })
      session.append('turn/end', { turn: number, outcome: { kind: 'completed' } })
      if (number === at) sessions.checkpoint(session, 'interval')
      await sessions.flush(session)
    }
    await sessions.close(session)
    return { id: session.id, file: session.file, starts }
  }

  it('reads back from the checkpoint to the start of the turns asked for, verified by the chain into the index', async () => {
    const dir = await tempDir()
    const { sessions } = await launch(dir)
    // 30 turns of ~100 KiB before the checkpoint: the window reads about 1 MiB of them, not the 3 MiB. On
    // version 2 the window is cut inside a batch: it starts at the next batch, chained from the one it cuts.
    const { id, starts } = await written(sessions, dir, 30, 30)
    const last = await sessions.open(id, { readOnly: true, from: 'checkpoint', turns: 1 })
    expect(last.firstSeq).toBe(starts[29])
    expect(last.records[0]).toMatchObject({ type: 'turn/start', data: { turn: 30 } })
    expect(last.records.at(-1)?.type).toBe('session/checkpoint')
    expect(last.integrity.state).toBe('signed')
    expect(last.header.id).toBe(id)
    await sessions.close(last)
    const three = await sessions.open(id, { readOnly: true, from: 'checkpoint', turns: 3 })
    expect(three.firstSeq).toBe(starts[27])
    expect(three.records.filter((record) => record.type === 'turn/start').map((record) => record.data)).toEqual([{ turn: 28 }, { turn: 29 }, { turn: 30 }])
    await sessions.close(three)
  })

  it('reads the whole log, and says where it was edited, when a line before the checkpoint was changed', async () => {
    const dir = await tempDir()
    const { sessions, logs } = await launch(dir)
    const { id, file } = await written(sessions, dir, 30, 30)
    const lines = (await readLog(file)).split('\n')
    const edited = lines.length - 50
    // The same length: the index still places the checkpoint.
    lines[edited] = lines[edited].replace('xxx', 'xyx')
    await replaceLog(file, lines.slice(0, -1))
    const session = await sessions.open(id, { readOnly: true, from: 'checkpoint', turns: 1 })
    expect(session.firstSeq).toBe(0)
    // Located to the line, or on version 2 to its batch (the turn's).
    expect(session.integrity).toMatchObject({ state: 'tampered', line: signingLine(lines, edited) + 1 })
    if (BATCHED) expect(signingLine(lines, edited)).toBeLessThan(edited)
    expect(logs.some((log) => log.text.includes(`${id}: the lines before its last checkpoint do not verify: the whole log is read`))).toBe(true)
  })
})

describeOnFiles('the head of a log opened for writing from its last checkpoint', () => {
  async function closedWithCheckpoint(sessions: SessionService, dir: string) {
    const session = await sessions.create({ cwd: dir })
    const counter = { count: 0 }
    for (let number = 1; number <= 5; number++) turn(sessions, session, number, counter)
    const checkpoint = sessions.checkpoint(session, 'interval')!
    turn(sessions, session, 6, counter)
    await sessions.close(session)
    return { id: session.id, file: session.file, checkpoint }
  }

  it('is verified in the background: an edited early line is reported as a whole read reports it, without blocking the open', async () => {
    const dir = await tempDir()
    const { sessions, root, waitLog } = await launch(dir)
    const { id, file, checkpoint } = await closedWithCheckpoint(sessions, dir)
    const lines = (await readLog(file)).split('\n')
    lines[3] = lines[3].replace('xxx', 'xyx')
    await replaceLog(file, lines.slice(0, -1))
    // Line 4, or on version 2 the first line of its batch (all written by the close: lines 2 to the checkpoint).
    const line = signingLine(lines, 3) + 1
    expect(line).toBe(BATCHED ? 2 : 4)
    const reported = new Promise<unknown>((resolve) => root.on('session/tampered', (_session, integrity) => resolve(integrity)))
    const session = await sessions.open(id)
    expect(session.firstSeq).toBe(checkpoint.seq)
    // Opened before the head was read; the session goes on being written meanwhile.
    session.append('test/item', { i: -1 })
    const integrity = await reported
    expect(integrity).toMatchObject({ state: 'tampered', line, reason: expect.stringContaining(`${file}:${line}: ${BATCHED ? `lines ${line}-` : 'line does not match its signature'}`) })
    expect(session.integrity).toEqual(integrity)
    await waitLog((log) => log.type === 'warn' && log.text.includes(`${id}: ${file}:${line}: `) && log.text.includes('found after it was opened from that checkpoint'))
    // The listing says what a whole read says.
    const listed = (await sessions.list()).find((summary) => summary.id === id)
    expect(listed?.problem).toMatchObject({ code: 'SESSION_TAMPERED', line })
    await sessions.close(session)
    await expect(sessions.open(id, { from: 'start' })).rejects.toMatchObject({ code: 'SESSION_TAMPERED', line })
  })

  it('finds nothing in a log nobody changed, and stops when the session is closed first', async () => {
    const dir = await tempDir()
    const { sessions, root, waitLog } = await launch(dir)
    const { id } = await closedWithCheckpoint(sessions, dir)
    let reported = false
    root.on('session/tampered', () => { reported = true })
    const session = await sessions.open(id)
    await waitLog((log) => log.text.includes(`${id}: the log before its last checkpoint verified`))
    expect(session.integrity.state).toBe('signed')
    await sessions.close(session)
    const again = await sessions.open(id)
    await sessions.close(again)
    expect(reported).toBe(false)
    expect((await sessions.list()).find((summary) => summary.id === id)?.problem).toBeUndefined()
  })
})
