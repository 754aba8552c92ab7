import { describe, expect, it } from 'vitest'
import { foldGoal, GoalFold, type GoalError } from '../src/index.ts'
import { goal, LogBuilder } from './log-builder.ts'

/** A legal history: create, two rounds, edit, block, resume, a round, complete. */
function legalLog(): LogBuilder {
  const log = new LogBuilder()
  log.change('create', goal())
  log.round('g1', 1, 1)
  log.human()
  log.round('g1', 1, 2)
  log.change('edit', goal({ revision: 2, objective: 'Ship it twice', roundsStarted: 2, updatedAt: 110 }))
  log.change('block', goal({ revision: 3, objective: 'Ship it twice', roundsStarted: 2, updatedAt: 120, phase: 'blocked', blockedReason: { code: 'needs-key', message: 'No key' } }))
  log.change('resume', goal({ revision: 4, objective: 'Ship it twice', roundsStarted: 2, updatedAt: 130 }))
  log.round('g1', 4, 3)
  log.change('complete', goal({ revision: 5, objective: 'Ship it twice', roundsStarted: 3, updatedAt: 140, phase: 'complete' }))
  return log
}

function expectCorrupt(records: LogBuilder['records'], seq: number, detail: RegExp): void {
  const fold = new GoalFold()
  fold.catchUp(records)
  for (let i = 0; i < 2; i++) {
    let caught: GoalError | undefined
    try {
      void fold.current
    } catch (error) {
      caught = error as GoalError
    }
    expect(caught?.code).toBe('GOAL_CORRUPT_LOG')
    expect(caught?.seq).toBe(seq)
    expect(caught?.message).toContain(`seq ${seq}`)
    expect(caught?.message).toMatch(detail)
  }
  expect(() => foldGoal(records)).toThrow(`seq ${seq}`)
}

describe('foldGoal', () => {
  it('folds a legal history, counting only admitted goal rounds', () => {
    expect(foldGoal(legalLog().records)).toEqual(goal({ revision: 5, objective: 'Ship it twice', roundsStarted: 3, updatedAt: 140, phase: 'complete' }))
  })

  it('has no goal for a log without goal records, and none after clear', () => {
    const log = new LogBuilder()
    log.human()
    expect(foldGoal(log.records)).toBeUndefined()
    log.change('create', goal())
    log.clear('g1', 1)
    expect(foldGoal(log.records)).toBeUndefined()
  })

  it('allows a new goal after complete and after clear, each with a fresh id', () => {
    const log = legalLog()
    log.change('create', goal({ id: 'g2', createdAt: 150, updatedAt: 150 }))
    log.clear('g2', 1)
    log.change('create', goal({ id: 'g3', createdAt: 160, updatedAt: 160 }))
    expect(foldGoal(log.records)?.id).toBe('g3')
  })

  it('folds incrementally to the same result as a full fold', () => {
    const records = legalLog().records
    const fold = new GoalFold()
    for (let i = 1; i <= records.length; i++) {
      fold.catchUp(records.slice(0, i))
      expect(fold.current).toEqual(foldGoal(records.slice(0, i)))
    }
  })

  it('does not count rounds from records other than user/message', () => {
    const log = new LogBuilder()
    log.change('create', goal())
    log.push('input/queued', { message: { id: 'q', content: [], source: { kind: 'goal', goalId: 'g1', revision: 1, round: 1 } } })
    expect(foldGoal(log.records)?.roundsStarted).toBe(0)
  })
})

describe('foldGoal rejects every malformed or illegal record with its seq', () => {
  const cases: [string, (log: LogBuilder) => void, RegExp][] = [
    ['wrong revision step', (log) => log.change('edit', goal({ revision: 3, objective: 'x' })), /revision 3 where 2/],
    ['unknown operation', (log) => log.change('restart', goal({ revision: 2 })), /unknown goal operation "restart"/],
    ['extra key in the record data', (log) => log.push('goal/change', { op: 'pause', goal: goal({ revision: 2, phase: 'paused' }), extra: 1 }), /exactly the keys/],
    ['extra key in the snapshot', (log) => log.change('pause', { ...goal({ revision: 2, phase: 'paused' }), activation: 'armed' }), /exactly the keys.*activation/],
    ['missing key in the snapshot', (log) => { const g: Partial<ReturnType<typeof goal>> = goal({ revision: 2, phase: 'paused' }); delete g.createdAt; log.change('pause', g) }, /exactly the keys/],
    ['extra key in the blocked reason', (log) => log.change('block', goal({ revision: 2, phase: 'blocked', blockedReason: { code: 'x', message: 'y', hint: 'z' } as never })), /blockedReason must have exactly/],
    ['blocked reason outside blocked', (log) => log.change('pause', goal({ revision: 2, phase: 'paused', blockedReason: { code: 'x', message: 'y' } })), /exactly the keys/],
    ['data that is not an object', (log) => log.push('goal/change', 'create'), /not an object/],
    ['illegal transition', (log) => { log.change('pause', goal({ revision: 2, phase: 'paused' })); log.change('pause', goal({ revision: 3, phase: 'paused' })) }, /Cannot pause a paused goal/],
    ['phase change on edit', (log) => log.change('edit', goal({ revision: 2, phase: 'paused' })), /phase "paused" where "active"/],
    ['rounds changed by a mutation', (log) => log.change('pause', goal({ revision: 2, phase: 'paused', roundsStarted: 1 })), /roundsStarted 1 where 0/],
    ['create while a goal is active', (log) => log.change('create', goal({ id: 'g2' })), /already exists/],
    ['untrimmed objective', (log) => log.change('edit', goal({ revision: 2, objective: ' padded ' })), /objective " padded " where "padded"/],
    ['invalid cap', (log) => log.change('edit', goal({ revision: 2, maxGoalRounds: 0 })), /maximum number of goal rounds/],
    ['invalid block reason code', (log) => log.change('block', goal({ revision: 2, phase: 'blocked', blockedReason: { code: 'Not Kebab', message: 'm' } })), /lower-kebab-case/],
    ['a round for another goal', (log) => log.round('g9', 1, 1), /round of goal g9 but the current goal is g1/],
    ['a round with a stale revision', (log) => { log.change('edit', goal({ revision: 2, objective: 'x', updatedAt: 101 })); log.round('g1', 1, 1) }, /revision 1 but the goal is at revision 2/],
    ['a skipped round', (log) => log.round('g1', 1, 2), /round 2 but the next round is 1/],
    ['a second round in one turn', (log) => { log.round('g1', 1, 1); log.round('g1', 1, 1) }, /round 1 but the next round is 2/],
    ['a round of a paused goal', (log) => { log.change('pause', goal({ revision: 2, phase: 'paused' })); log.round('g1', 2, 1) }, /goal is paused/],
    ['a round beyond the cap', (log) => { log.change('edit', goal({ revision: 2, maxGoalRounds: 1 })); log.round('g1', 2, 1); log.round('g1', 2, 2) }, /beyond the goal's maximum/],
    ['a malformed goal source', (log) => log.push('user/message', { id: 'x', content: [], source: { kind: 'goal', goalId: 'g1', revision: 1, round: 1.5 } }), /round 1.5 is not a positive integer/],
    ['extra keys in a goal source', (log) => log.push('user/message', { id: 'x', content: [], source: { kind: 'goal', goalId: 'g1', revision: 1, round: 1, forged: true } }), /exactly the keys/],
    ['id reuse', (log) => { log.change('complete', goal({ revision: 2, phase: 'complete' })); log.change('create', goal({ updatedAt: 100 })) }, /id g1 was already used/],
    ['timestamps going backwards', (log) => { log.change('edit', goal({ revision: 2, objective: 'x', updatedAt: 120 })); log.change('pause', goal({ revision: 3, objective: 'x', phase: 'paused', updatedAt: 110 })) }, /updatedAt 110 goes back before 120/],
    ['createdAt rewritten', (log) => log.change('pause', goal({ revision: 2, phase: 'paused', createdAt: 50 })), /createdAt 50 where 100/],
    ['createdAt after updatedAt', (log) => log.change('create', goal({ id: 'g2', createdAt: 200, updatedAt: 150 })), /createdAt 200 is after updatedAt 150/],
    ['a non-integer timestamp', (log) => log.change('pause', goal({ revision: 2, phase: 'paused', updatedAt: 100.5 })), /updatedAt 100.5 is not a non-negative integer/],
    ['clear of another goal', (log) => log.clear('g1', 7), /clears .* but the current goal is/],
    ['clear without a goal', (log) => { log.clear('g1', 1); log.clear('g1', 1) }, /no goal to clear/],
    ['clear with a snapshot', (log) => log.push('goal/change', { op: 'clear', goal: goal(), cleared: { id: 'g1', revision: 1 } }), /goal: null/],
  ]

  for (const [name, corrupt, detail] of cases) {
    it(name, () => {
      const log = new LogBuilder()
      log.change('create', goal())
      log.human()
      const before = log.records.length
      corrupt(log)
      const bad = log.records.findIndex((_, index) => index >= before && !foldOk(log.records.slice(0, index + 1)))
      expect(bad).toBeGreaterThanOrEqual(before)
      // A later legal-looking record never heals the log.
      log.human()
      expectCorrupt(log.records, bad, detail)
    })
  }
})

function foldOk(records: LogBuilder['records']): boolean {
  try {
    foldGoal(records)
    return true
  } catch {
    return false
  }
}
