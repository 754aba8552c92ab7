// Folds that resume from a checkpoint: a session that let go of its head, or was opened from its last
// checkpoint, folds (foldSession, and its listing entry) as a whole read-only replay of its log does.
import { describe, expect, it } from 'vitest'
import { foldSession, type Session, type SessionRecord, type SessionService, type SummaryFold, type SummaryFoldRun } from '@goalkeeper/session'
import { appsPerTest, tempDir } from './helpers.ts'

const launch = appsPerTest()

interface Counted { items: number; turns: number; last: number | null }

/** Counts items and turns, and keeps the last item's number: a state that only the whole log gives. */
function counting(from: Counted): SummaryFoldRun<Counted> {
  const counted = { ...from }
  return {
    add(record: SessionRecord) {
      if (record.type === 'test/item') [counted.items, counted.last] = [counted.items + 1, (record.data as { i: number }).i]
      if (record.type === 'turn/end') counted.turns++
    },
    result: () => ({ ...counted }),
    state: () => ({ ...counted }),
  }
}
const countFold: SummaryFold<Counted> = { version: 'count/1', start: () => counting({ items: 0, turns: 0, last: null }), resume: (state) => counting(state as Counted) }
/** The same count without `resume`: it sees a session held from a checkpoint from there on. */
const tailFold: SummaryFold<Counted> = { version: 'tail/1', start: countFold.start }

function turns(sessions: SessionService, session: Session, count: number, counter: { i: number; turn: number }) {
  for (let n = 0; n < count; n++) {
    session.append('turn/start', { turn: ++counter.turn })
    for (let k = 0; k < 4; k++) session.append('test/item', { i: counter.i++, text: 'x' })
    session.append('turn/end', { turn: counter.turn, outcome: { kind: 'completed' } })
    if (sessions.checkpointDue(session)) sessions.checkpoint(session, 'interval')
  }
}

/** The fold over the whole log, read from its first line by a read-only open in a process of its own. */
async function wholeReplay(dir: string, id: string, fold: SummaryFold<Counted>): Promise<Counted> {
  const { sessions } = await launch(dir, {})
  const whole = await sessions.open(id, { readOnly: true })
  expect(whole.firstSeq).toBe(0)
  const run = fold.start()
  for (const record of whole.records) run.add(record)
  await sessions.close(whole)
  return run.result()
}

describe('folds resumed from checkpoints', () => {
  it('a live session that let go of its head, and the same session opened from its checkpoint, fold as the whole log', async () => {
    const dir = await tempDir()
    const { sessions } = await launch(dir, { checkpointEvery: 10 })
    sessions.keepFolds({ count: countFold, tail: tailFold })
    const session = await sessions.create({ cwd: dir })
    const counter = { i: 0, turn: 0 }
    turns(sessions, session, 12, counter)
    await sessions.flush(session)
    turns(sessions, session, 1, counter)
    // It let go of its head: several checkpoints passed, and the records held start at the last.
    expect(session.firstSeq).toBeGreaterThan(0)
    expect(session.records[0].type).toBe('session/checkpoint')
    const live = foldSession(session, countFold)
    expect(live.from).toBe(0)
    expect(live.result).toEqual({ items: 52, turns: 13, last: 51 })
    // Without resume the fold counts what is held only: what this change is about.
    expect(foldSession(session, tailFold).result.items).toBeLessThan(52)
    const listed = (await sessions.list({ folds: { count: countFold, tail: tailFold } })).find((summary) => summary.id === session.id)!
    expect(listed.folds?.count).toEqual(live.result)
    await sessions.close(session)
    expect(await wholeReplay(dir, session.id, countFold)).toEqual(live.result)

    // Opened again from its last checkpoint, in another process.
    const { sessions: later } = await launch(dir, { checkpointEvery: 10 })
    later.keepFolds({ count: countFold })
    const reopened = await later.open(session.id)
    expect(reopened.firstSeq).toBeGreaterThan(0)
    turns(later, reopened, 3, counter)
    const again = foldSession(reopened, countFold)
    expect(again.result).toEqual({ items: 64, turns: 16, last: 63 })
    expect((await later.list({ folds: { count: countFold } })).find((summary) => summary.id === session.id)!.folds?.count).toEqual(again.result)
    await later.close(reopened)
    expect(await wholeReplay(dir, session.id, countFold)).toEqual(again.result)
  })

  it('a checkpoint that carries no state for the fold (written before it was kept) makes it count from there, and says so', async () => {
    const dir = await tempDir()
    const { sessions } = await launch(dir, { checkpointEvery: 10 })
    const session = await sessions.create({ cwd: dir })
    const counter = { i: 0, turn: 0 }
    turns(sessions, session, 4, counter)
    await sessions.close(session)
    const { sessions: later } = await launch(dir, { checkpointEvery: 10 })
    later.keepFolds({ count: countFold })
    const reopened = await later.open(session.id)
    expect(reopened.firstSeq).toBeGreaterThan(0)
    const partial = foldSession(reopened, countFold)
    expect(partial.from).toBe(reopened.firstSeq)
    expect(partial.result.items).toBeLessThan(16)
    // Its next checkpoint carries what it counted, with where that count started.
    turns(later, reopened, 3, counter)
    const part = (reopened.records.findLast((record) => record.type === 'session/checkpoint')!.data as { parts: { summary: { folds: Record<string, { from: number }> } } }).parts.summary
    expect(part.folds['count/1'].from).toBe(partial.from)
    await later.close(reopened)
  })
})
