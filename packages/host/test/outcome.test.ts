// How runs end, in words and in exit codes: the renderers of render/outcome.ts and render/goal-text.ts
// (a turn outcome's wording is the goal package's, tested there).
import type { Goal, GoalState } from '@goalkeeper/goal'
import type { TurnOutcome } from '@goalkeeper/session'
import { describe, expect, it } from 'vitest'
import { ExitCode } from '../src/exit-codes.ts'
import { describeActivation, describeGoalChange, goalSummary } from '../src/commands/render/goal-text.ts'
import { goalExitCode, turnExitCode } from '../src/commands/render/outcome.ts'

const goal = (changes: Partial<GoalState> = {}): GoalState => ({
  id: 'g1',
  objective: 'Summarise the workspace',
  phase: 'active',
  activation: 'armed',
  revision: 3,
  maxGoalRounds: 5,
  roundsStarted: 2,
  createdAt: 1,
  updatedAt: 2,
  ...changes,
})

const blocked = (code: string, message = 'it needs access') => goal({ phase: 'blocked', blockedReason: { code, message } })

describe('exit codes', () => {
  it('maps where a goal ended: complete 0, blocked 2, out of rounds 4, out of budget 5, refused 6, stopped without an outcome 3', () => {
    expect(goalExitCode(goal({ phase: 'complete' }))).toBe(ExitCode.OK)
    expect(goalExitCode(blocked('needs-access'))).toBe(ExitCode.BLOCKED)
    expect(goalExitCode(blocked('round-limit'))).toBe(ExitCode.ROUND_LIMIT)
    expect(goalExitCode(blocked('budget-limited'))).toBe(ExitCode.BUDGET_LIMIT)
    expect(goalExitCode(blocked('refused'))).toBe(ExitCode.REFUSED)
    expect(goalExitCode(goal({ phase: 'paused' }))).toBe(ExitCode.PAUSED)
    expect(goalExitCode(goal({ activation: 'disarmed' }))).toBe(ExitCode.PAUSED)
    expect(goalExitCode(undefined)).toBe(ExitCode.PAUSED)
  })

  it("maps a plain prompt's last turn: completed, preempted or none 0, cancelled 3, refused 6, anything else 70", () => {
    const cases: [TurnOutcome | undefined, number][] = [
      [undefined, ExitCode.OK],
      [{ kind: 'completed' }, ExitCode.OK],
      [{ kind: 'aborted', cause: 'user' }, ExitCode.PAUSED],
      [{ kind: 'preempted', cause: 'human message m1 arrived during goal round 2' }, ExitCode.OK],
      [{ kind: 'error', code: 'AUTH', message: 'bad key' }, ExitCode.RUNTIME],
      [{ kind: 'error', code: 'REFUSED', message: 'deepseek: the model refused: no' }, ExitCode.REFUSED],
      [{ kind: 'max-tokens' }, ExitCode.RUNTIME],
      [{ kind: 'disposed' }, ExitCode.RUNTIME],
      [{ kind: 'interrupted' }, ExitCode.RUNTIME],
    ]
    for (const [outcome, code] of cases) expect(turnExitCode(outcome), JSON.stringify(outcome)).toBe(code)
  })

  it('keeps the published values', () => {
    expect(ExitCode).toEqual({ OK: 0, BLOCKED: 2, PAUSED: 3, ROUND_LIMIT: 4, BUDGET_LIMIT: 5, REFUSED: 6, OUTPUT_INVALID: 7, CONTROL_REFUSED: 8, NOT_HELD: 9, GONE: 10, USAGE: 64, RUNTIME: 70, NOT_SAVED: 74, INTERRUPTED: 130 })
  })
})

describe('outcome text', () => {
  it('summarises the goal at the end of a run', () => {
    expect(goalSummary(goal({ phase: 'complete', roundsStarted: 3 }))).toBe('Goal complete (not verified) after 3/5 rounds: "Summarise the workspace"')
    const checked = { verify: ['npm test'], verification: { attempts: 2, failures: 1, last: { command: 'npm test', ok: true, exitCode: 0 } } }
    expect(goalSummary(goal({ phase: 'complete', roundsStarted: 3, ...checked }))).toBe('Goal complete (verified: 1 check passed) after 3/5 rounds: "Summarise the workspace"')
    // A check that last failed (the goal was completed by other means) does not verify it.
    expect(goalSummary(goal({ phase: 'complete', roundsStarted: 3, ...checked, verification: { ...checked.verification, last: { command: 'npm test', ok: false, exitCode: 1 } } }))).toMatch(/^Goal complete \(not verified\)/)
    const judged = { judgement: { attempts: 3, rejectionsInARow: 0, last: { judge: 'cheap', verdict: 'met' as const, accepted: true, reasons: ['ok'], missing: [], diff: null } } }
    expect(goalSummary(goal({ phase: 'complete', roundsStarted: 3, ...checked, ...judged }))).toBe('Goal complete (verified: 1 check passed; judged met by cheap) after 3/5 rounds: "Summarise the workspace"')
    expect(goalSummary(goal({ phase: 'complete', ...judged }))).toMatch(/^Goal complete \(judged met by cheap\)/)
    // A refusal that was not followed by an accepted completion verifies nothing.
    expect(goalSummary(goal({ phase: 'complete', judgement: { ...judged.judgement, rejectionsInARow: 1, last: { ...judged.judgement.last, verdict: 'not-met', accepted: false } } }))).toMatch(/^Goal complete \(not verified\)/)
    expect(goalSummary(goal({ phase: 'complete', completedBy: 'person', ...checked }))).toMatch(/^Goal complete \(completed by a person\)/)
    expect(goalSummary(goal({ phase: 'paused' }))).toBe('Goal paused after 2/5 rounds: "Summarise the workspace"')
    expect(goalSummary(blocked('needs-access'))).toBe('Goal blocked (needs-access) after 2/5 rounds: "Summarise the workspace"\nit needs access')
    expect(goalSummary(blocked('round-limit', ''))).toBe('Goal out of rounds after 2/5 rounds: "Summarise the workspace"')
    expect(goalSummary(goal({ activation: 'disarmed' }))).toBe('Goal active (disarmed) after 2/5 rounds: "Summarise the workspace"')
    expect(goalSummary(undefined)).toBe('No goal: it was cleared.')
    expect(goalSummary(goal({ objective: `${'x'.repeat(300)}\nmore` }))).toBe(`Goal active (armed) after 2/5 rounds: "${'x'.repeat(199)}…"`)
  })

  it('gives one progress line per goal change, and activation only while the goal is active', () => {
    const change = (op: string, after: Goal | undefined) => describeGoalChange({ op: op as never, seq: 9, goal: after, previous: undefined })
    expect(change('create', goal({ maxGoalRounds: 1 }))).toBe('goal set: "Summarise the workspace" (at most 1 round)')
    expect(change('edit', goal({ phase: 'paused' }))).toBe('goal edited: "Summarise the workspace" (at most 5 rounds, paused)')
    expect(change('pause', goal())).toBe('goal paused after round 2/5')
    expect(change('resume', goal())).toBe('goal resumed after round 2/5')
    expect(change('complete', goal())).toBe('goal complete after round 2/5')
    expect(change('complete', goal({ completedBy: 'person' }))).toBe('goal complete after round 2/5 (completed by a person)')
    expect(change('block', blocked('needs-access', 'line one\nline two'))).toBe('goal blocked after round 2/5: needs-access: line one line two')
    expect(change('clear', undefined)).toBe('goal cleared')
    expect(describeActivation('armed', goal())).toBe('goal armed: rounds run automatically')
    expect(describeActivation('disarmed', goal())).toBe('goal disarmed: no automatic rounds until it is resumed')
    expect(describeActivation('disarmed', goal({ phase: 'paused' }))).toBeUndefined()
  })
})
