import { describe, expect, it } from 'vitest'
import type { Goal } from '@goalkeeper/goal'
import type { SessionRecord } from '@goalkeeper/session'
import { GoalView } from '../src/goal-view.ts'

let seq = 0
const record = (type: string, data: unknown) => ({ seq: seq++, at: 1_000 + seq, type, data }) as SessionRecord

const goal = (patch: Partial<Goal> = {}): Goal => ({
  id: 'g1', objective: 'Ship it', phase: 'active', revision: 1, maxGoalRounds: 5, roundsStarted: 1,
  budgets: { tokens: 1_000, costUsd: 0.5 }, verify: ['npm test'], createdAt: 1, updatedAt: 1, ...patch,
})

describe('the goal snapshot a client sees', () => {
  it('carries the budgets, the check, and a spend that moves with every counted model call', () => {
    const view = new GoalView()
    expect(view.observe(record('goal/change', { op: 'create', goal: goal() }))).toBe(true)
    expect(view.snapshot(undefined)).toMatchObject({ budgets: { tokens: 1_000, costUsd: 0.5 }, spent: null, verify: ['npm test'], verification: null })

    const usage = { goalId: 'g1', round: 1, turn: 2, step: 1, tokens: 300, costUsd: 0.01, activeTimeMs: 1_200 }
    expect(view.observe(record('goal/usage', usage))).toBe(true)
    expect(view.observe(record('goal/usage', { ...usage, step: 2, tokens: 200, costUsd: null }))).toBe(true)
    // A call of another goal (an old one) is not this goal's spend.
    expect(view.observe(record('goal/usage', { ...usage, goalId: 'old' }))).toBe(false)
    expect(view.snapshot(undefined)?.spent).toEqual({ tokens: 500, costUsd: null, activeTimeMs: 2_400, calls: 2 })

    // A goal change carries the spend the goal package folded; the view takes it as it is.
    view.observe(record('goal/change', { op: 'block', goal: goal({ phase: 'blocked', blockedReason: { code: 'budget-limited', message: 'tokens used up' }, spent: { tokens: 1_000, costUsd: null, activeTimeMs: 3_000, calls: 3 } }) }))
    expect(view.snapshot(undefined)).toMatchObject({ status: 'limited', spent: { tokens: 1_000, calls: 3 }, judgement: null, completedOn: null })
  })

  it('says what a complete goal stood on: its check and the judge', () => {
    const view = new GoalView()
    const judgement = { attempts: 2, rejectionsInARow: 0, last: { judge: 'cheap', verdict: 'met' as const, accepted: true, reasons: ['ok'], missing: [], diff: null } }
    const verification = { attempts: 2, failures: 0, last: { command: 'npm test', ok: true, exitCode: 0 } }
    view.observe(record('goal/change', { op: 'complete', goal: goal({ phase: 'complete', verification, judgement }) }))
    expect(view.snapshot(undefined)).toMatchObject({ judgement, completedOn: 'verified: 1 check passed; judged met by cheap' })
  })

  it('says null where the goal has no budget and no check', () => {
    const view = new GoalView()
    view.observe(record('goal/change', { op: 'create', goal: goal({ budgets: undefined, verify: undefined }) }))
    expect(view.snapshot(undefined)).toMatchObject({ budgets: null, spent: null, verify: null, verification: null })
  })

  it('counts a round as started at its admission, also one cut by a crash before any goal change', () => {
    const view = new GoalView()
    view.observe(record('goal/change', { op: 'create', goal: goal({ roundsStarted: 0 }) }))
    expect(view.snapshot(undefined)).toMatchObject({ roundsStarted: 0, iterations: 0, lastRound: null })
    view.observe(record('turn/start', { turn: 1 }))
    const source = { kind: 'goal', goalId: 'g1', revision: 1, round: 1 }
    expect(view.observe(record('user/message', { id: 'm1', content: [{ type: 'text', text: 'round' }], source }))).toBe(true)
    expect(view.snapshot(undefined)).toMatchObject({ roundsStarted: 1, lastRound: { round: 1, state: 'running' } })
    // The repair after the crash closes the turn; the goal change a later resume writes agrees.
    view.observe(record('turn/end', { turn: 1, outcome: { kind: 'interrupted' } }))
    expect(view.snapshot(undefined)).toMatchObject({ roundsStarted: 1, iterations: 1, lastRound: { round: 1, state: 'ended', outcome: 'interrupted' } })
    view.observe(record('goal/change', { op: 'resume', goal: goal({ roundsStarted: 1, revision: 2 }) }))
    expect(view.snapshot(undefined)).toMatchObject({ roundsStarted: 1, revision: 2 })
  })
})
