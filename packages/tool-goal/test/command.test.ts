import { describe, expect, it } from 'vitest'
import { parseGoalCommand } from '../src/index.ts'

describe('parseGoalCommand', () => {
  it('ignores input that is not a /goal command', () => {
    for (const input of ['hello', '/goals', '/goalkeeper pause', 'please /goal pause', '']) expect(parseGoalCommand(input)).toBeUndefined()
  })

  it('shows the goal for a bare /goal', () => {
    for (const input of ['/goal', '/goal   ', '  /goal\n', '/GOAL']) expect(parseGoalCommand(input)).toEqual({ kind: 'show' })
  })

  it('reads control words case-insensitively, only as the whole input', () => {
    expect(parseGoalCommand('/goal pause')).toEqual({ kind: 'pause' })
    expect(parseGoalCommand('/goal PAUSE')).toEqual({ kind: 'pause' })
    expect(parseGoalCommand('/goal Resume ')).toEqual({ kind: 'resume' })
    expect(parseGoalCommand('/Goal cLeAr')).toEqual({ kind: 'clear' })
    expect(parseGoalCommand('/goal complete')).toEqual({ kind: 'complete' })
    expect(parseGoalCommand('/goal complete the migration')).toEqual({ kind: 'create', objective: 'complete the migration' })
    expect(parseGoalCommand('/goal pause the deploy after tests')).toEqual({ kind: 'create', objective: 'pause the deploy after tests' })
    expect(parseGoalCommand('/goal clear the cache')).toEqual({ kind: 'create', objective: 'clear the cache' })
    expect(parseGoalCommand('/goal resumes')).toEqual({ kind: 'create', objective: 'resumes' })
  })

  it('creates with the objective, keeping multi-line text', () => {
    expect(parseGoalCommand('/goal Fix the failing tests')).toEqual({ kind: 'create', objective: 'Fix the failing tests' })
    expect(parseGoalCommand('/goal\n  Step one\n  Step two\n')).toEqual({ kind: 'create', objective: 'Step one\n  Step two' })
    expect(parseGoalCommand('/goal pause\nthen deploy')).toEqual({ kind: 'create', objective: 'pause\nthen deploy' })
  })

  it('creates with a round cap', () => {
    expect(parseGoalCommand('/goal --max-rounds 12 Port the parser')).toEqual({ kind: 'create', objective: 'Port the parser', maxGoalRounds: 12 })
    expect(parseGoalCommand('/goal --max-rounds=3 A\nB')).toEqual({ kind: 'create', objective: 'A\nB', maxGoalRounds: 3 })
    expect(parseGoalCommand('/goal --max-rounds 3')).toMatchObject({ kind: 'invalid' })
  })

  it('edits the objective, the cap, or both', () => {
    expect(parseGoalCommand('/goal edit Ship v2')).toEqual({ kind: 'edit', objective: 'Ship v2' })
    expect(parseGoalCommand('/goal EDIT\nline 1\nline 2')).toEqual({ kind: 'edit', objective: 'line 1\nline 2' })
    expect(parseGoalCommand('/goal edit --max-rounds 40')).toEqual({ kind: 'edit', maxGoalRounds: 40 })
    expect(parseGoalCommand('/goal edit --max-rounds 40 Ship v3')).toEqual({ kind: 'edit', objective: 'Ship v3', maxGoalRounds: 40 })
    expect(parseGoalCommand('/goal editing the docs')).toEqual({ kind: 'create', objective: 'editing the docs' })
  })

  it('explains invalid forms', () => {
    expect(parseGoalCommand('/goal edit')).toMatchObject({ kind: 'invalid', message: expect.stringContaining('/goal edit <objective>') })
    expect(parseGoalCommand('/goal edit   ')).toMatchObject({ kind: 'invalid' })
    for (const bad of ['0', '-2', '1.5', 'many', '']) {
      expect(parseGoalCommand(`/goal edit --max-rounds ${bad}`)).toMatchObject({ kind: 'invalid', message: expect.stringContaining('positive whole number') })
    }
  })

  it('reads budget options in any order before the objective, and /goal budget for options alone', () => {
    expect(parseGoalCommand('/goal --token-budget 50000 --cost-budget 2.50 --time-budget 1h30m --max-rounds 8 Port the parser')).toEqual({
      kind: 'create', objective: 'Port the parser', maxGoalRounds: 8, budgets: { tokens: 50_000, costUsd: 2.5, activeTimeMs: 5_400_000 },
    })
    expect(parseGoalCommand('/goal budget --token-budget=90000')).toEqual({ kind: 'budget', budgets: { tokens: 90_000 } })
    expect(parseGoalCommand('/goal budget --cost-budget $5 --time-budget 2h')).toEqual({ kind: 'budget', budgets: { costUsd: 5, activeTimeMs: 7_200_000 } })
    expect(parseGoalCommand('/goal edit --time-budget 45m')).toEqual({ kind: 'edit', budgets: { activeTimeMs: 2_700_000 } })
    // Without options, "budget" is the start of an objective.
    expect(parseGoalCommand('/goal budget the quarterly report')).toEqual({ kind: 'create', objective: 'budget the quarterly report' })
  })

  it('explains bad budget options', () => {
    expect(parseGoalCommand('/goal --token-budget 0 X')).toMatchObject({ kind: 'invalid', message: expect.stringContaining('--token-budget needs a positive whole number') })
    expect(parseGoalCommand('/goal --cost-budget free X')).toMatchObject({ kind: 'invalid', message: expect.stringContaining('--cost-budget needs') })
    expect(parseGoalCommand('/goal --time-budget 30 X')).toMatchObject({ kind: 'invalid', message: expect.stringContaining('with its unit') })
    expect(parseGoalCommand('/goal --tokens 5 X')).toMatchObject({ kind: 'invalid', message: expect.stringContaining('Unknown option --tokens') })
    expect(parseGoalCommand('/goal budget --max-rounds 4')).toMatchObject({ kind: 'invalid', message: expect.stringContaining('budget options only') })
  })
})
