import { describe, expect, it } from 'vitest'
import { transition, checkClear, type MutatingOperation } from '../src/transitions.ts'
import { MAX_OBJECTIVE_LENGTH, type Goal, type GoalPhase } from '../src/index.ts'
import { goal } from './log-builder.ts'
import { codeOf } from './code-of.ts'

const reason = { code: 'needs-access', message: 'No credentials for the registry' }

function inPhase(phase: GoalPhase): Goal {
  return phase === 'blocked' ? goal({ phase, blockedReason: { ...reason } }) : goal({ phase })
}

// DESIGN.md section 7; resume of an active goal is legal here because the armed check is process-local (service).
const table: Record<Exclude<MutatingOperation, 'create'>, Partial<Record<GoalPhase, GoalPhase>>> = {
  edit: { active: 'active', paused: 'paused', blocked: 'blocked', complete: 'complete' },
  pause: { active: 'paused' },
  resume: { active: 'active', paused: 'active', blocked: 'active' },
  complete: { active: 'complete', paused: 'complete', blocked: 'complete' },
  block: { active: 'blocked' },
}
const phases: GoalPhase[] = ['active', 'paused', 'blocked', 'complete']

describe('transition table', () => {
  for (const [op, allowed] of Object.entries(table) as [Exclude<MutatingOperation, 'create'>, Partial<Record<GoalPhase, GoalPhase>>][]) {
    for (const phase of phases) {
      const target = allowed[phase]
      it(`${op} from ${phase} ${target ? `-> ${target}` : 'is refused'}`, () => {
        const prev = inPhase(phase)
        const run = () => transition(prev, op, { now: 200, objective: 'New text', reason })
        if (!target) {
          expect(codeOf(run)).toBe('GOAL_INVALID_TRANSITION')
          return
        }
        const next = run()
        expect(next.phase).toBe(target)
        expect(next.revision).toBe(prev.revision + 1)
        expect(next.updatedAt).toBe(200)
        expect(next.createdAt).toBe(prev.createdAt)
        expect(next.roundsStarted).toBe(prev.roundsStarted)
        expect('blockedReason' in next).toBe(target === 'blocked')
        if (op !== 'edit') expect(next.objective).toBe(prev.objective)
      })
    }
  }

  it('create needs no goal or a complete one', () => {
    const created = transition(undefined, 'create', { now: 5, id: 'a', objective: '  Do it \n', defaultMaxGoalRounds: 256 })
    expect(created).toEqual({ id: 'a', objective: 'Do it', phase: 'active', revision: 1, maxGoalRounds: 256, roundsStarted: 0, createdAt: 5, updatedAt: 5 })
    expect(transition(inPhase('complete'), 'create', { now: 5, id: 'b', objective: 'x', maxGoalRounds: 3 }).maxGoalRounds).toBe(3)
    for (const phase of ['active', 'paused', 'blocked'] as const) {
      expect(codeOf(() => transition(inPhase(phase), 'create', { now: 5, id: 'b', objective: 'x', defaultMaxGoalRounds: 3 }))).toBe('GOAL_ALREADY_EXISTS')
    }
  })

  it('create advice names edit and clear', () => {
    expect(() => transition(goal(), 'create', { now: 5, id: 'b', objective: 'x', defaultMaxGoalRounds: 3 })).toThrow(/Edit it, or clear it/)
  })

  it('every operation but create needs a goal', () => {
    for (const op of Object.keys(table) as MutatingOperation[]) {
      expect(codeOf(() => transition(undefined, op, { now: 1, objective: 'x', reason }))).toBe('GOAL_NOT_FOUND')
    }
    expect(codeOf(() => checkClear(undefined))).toBe('GOAL_NOT_FOUND')
    for (const phase of phases) expect(checkClear(inPhase(phase)).phase).toBe(phase)
  })

  it('editing the cap of a blocked goal keeps the reason and the phase', () => {
    const blocked = goal({ phase: 'blocked', roundsStarted: 5, blockedReason: { code: 'round-limit', message: 'Used 5 of 5 rounds' } })
    const edited = transition(blocked, 'edit', { now: 300, maxGoalRounds: 10 })
    expect(edited).toMatchObject({ phase: 'blocked', maxGoalRounds: 10, blockedReason: { code: 'round-limit', message: 'Used 5 of 5 rounds' }, revision: 2 })
  })

  it('resume is refused at the cap, and allowed again after raising it', () => {
    const atCap = goal({ phase: 'blocked', roundsStarted: 5, maxGoalRounds: 5, blockedReason: { code: 'round-limit', message: 'cap' } })
    expect(codeOf(() => transition(atCap, 'resume', { now: 1 }))).toBe('GOAL_ROUND_LIMIT')
    expect(codeOf(() => transition({ ...atCap, phase: 'paused', blockedReason: undefined }, 'resume', { now: 1 }))).toBe('GOAL_ROUND_LIMIT')
    const raised = transition(atCap, 'edit', { now: 200, maxGoalRounds: 6 })
    expect(transition(raised, 'resume', { now: 201 })).toMatchObject({ phase: 'active', revision: 3 })
  })

  it('edit needs something to change', () => {
    expect(codeOf(() => transition(goal(), 'edit', { now: 1 }))).toBe('GOAL_INVALID_TRANSITION')
  })
})

describe('validation', () => {
  it('objectives are trimmed, non-empty text within the limit; multi-line text is kept', () => {
    const edit = (objective: unknown) => transition(goal(), 'edit', { now: 1, objective })
    expect(edit('\n  line one\nline two  \n').objective).toBe('line one\nline two')
    for (const bad of ['', '   \n\t', 42, null, 'x'.repeat(MAX_OBJECTIVE_LENGTH + 1)]) expect(codeOf(() => edit(bad))).toBe('GOAL_INVALID_OBJECTIVE')
    expect(edit('x'.repeat(MAX_OBJECTIVE_LENGTH)).objective).toHaveLength(MAX_OBJECTIVE_LENGTH)
  })

  it('max rounds is a positive safe integer', () => {
    const edit = (maxGoalRounds: unknown) => transition(goal(), 'edit', { now: 1, maxGoalRounds })
    for (const bad of [0, -1, 1.5, Number.NaN, Infinity, 2 ** 53, '5', null]) expect(codeOf(() => edit(bad))).toBe('GOAL_INVALID_MAX_ROUNDS')
    expect(edit(1).maxGoalRounds).toBe(1)
    expect(codeOf(() => transition(undefined, 'create', { now: 1, id: 'a', objective: 'x', maxGoalRounds: 0, defaultMaxGoalRounds: 3 }))).toBe('GOAL_INVALID_MAX_ROUNDS')
  })

  it('block reasons have a lower-kebab-case code and a trimmed message', () => {
    const block = (value: unknown) => transition(goal(), 'block', { now: 1, reason: value })
    expect(block({ code: 'tests-fail', message: '  red  ' }).blockedReason).toEqual({ code: 'tests-fail', message: 'red' })
    const bad = [undefined, 'tests-fail', { code: 'Tests', message: 'x' }, { code: 'a--b', message: 'x' }, { code: 'ok', message: '  ' }, { code: 'ok', message: 'x', extra: 1 }, { code: '-x', message: 'm' }]
    for (const value of bad) expect(codeOf(() => block(value))).toBe('GOAL_INVALID_BLOCK_REASON')
  })
})
