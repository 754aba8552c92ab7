// The goal's status as every front end reads it: block codes and their owners, runnable and settled, and
// the wording of a phase, a spend and a turn outcome.
import { describe, expect, it } from 'vitest'
import type { TurnOutcome } from '@goalkeeper/session'
import { BLOCK, BLOCK_CODES, blockCodesOf, describeGoalStatus, describePhase, describeVerification, describeSpend, describeTurnOutcome, isBlockCode, isLimitCode, isRunnable, isSettled, tokensOf, type GoalState } from '../src/index.ts'

const goal = (changes: Partial<GoalState> = {}): GoalState => ({
  id: 'g1', objective: 'o', phase: 'active', activation: 'armed', revision: 1, maxGoalRounds: 5, roundsStarted: 2, createdAt: 1, updatedAt: 2, ...changes,
})
const blocked = (code: string) => goal({ phase: 'blocked', activation: 'disarmed', blockedReason: { code, message: 'why' } })

describe('block codes', () => {
  it('name every code of the table once, each with its owner', () => {
    expect(Object.values(BLOCK).sort()).toEqual(Object.keys(BLOCK_CODES).sort())
    expect(blockCodesOf('policy')).toEqual(['repeated-tool-call', 'mistake-limit', 'no-progress'])
    expect(blockCodesOf('budget')).toEqual(['budget-limited'])
    expect(BLOCK_CODES[BLOCK.roundLimit].owner).toBe('goal-session')
    expect(BLOCK_CODES[BLOCK.modelReported].owner).toBe('tool-goal')
  })

  it('tell a stop by a limit from a failure, and a known code from any other', () => {
    expect([BLOCK.roundLimit, BLOCK.usageLimited, BLOCK.budgetLimited, BLOCK.turnError, BLOCK.modelReported, 'made-up', undefined].map(isLimitCode))
      .toEqual([true, true, true, false, false, false, false])
    expect([BLOCK.noProgress, 'made-up', 3].map(isBlockCode)).toEqual([true, false, false])
  })
})

describe('runnable and settled', () => {
  it('runnable is active and armed, nothing else', () => {
    expect(isRunnable(goal())).toBe(true)
    expect(isRunnable(goal({ activation: 'disarmed' }))).toBe(false)
    expect(isRunnable(goal({ phase: 'paused', activation: 'disarmed' }))).toBe(false)
    expect(isRunnable(undefined)).toBe(false)
  })

  it('settled is complete or blocked, for whatever reason', () => {
    expect([goal({ phase: 'complete' }), blocked(BLOCK.roundLimit), blocked('model-reported'), goal(), goal({ phase: 'paused' }), undefined].map(isSettled))
      .toEqual([true, true, true, false, false, false])
  })
})

describe('status text', () => {
  it('words a phase, naming activation only while active and the limit that stopped a goal', () => {
    expect([
      goal(), goal({ activation: 'disarmed' }), goal({ phase: 'paused' }), goal({ phase: 'complete' }),
      blocked(BLOCK.roundLimit), blocked(BLOCK.budgetLimited), blocked(BLOCK.refused), goal({ phase: 'blocked' }),
    ].map(describePhase)).toEqual([
      'active (armed)', 'active (disarmed)', 'paused', 'complete', 'out of rounds', 'out of budget', 'blocked (refused)', 'blocked',
    ])
  })

  it('words a spend against the budgets, and nothing for a plain goal', () => {
    expect(describeSpend(goal())).toBeUndefined()
    expect(describeSpend(goal({ budgets: { tokens: 50_000, costUsd: 2.5, activeTimeMs: 1_800_000 }, spent: { tokens: 1234, costUsd: 0.0031, activeTimeMs: 180_000, calls: 3 } })))
      .toBe('tokens 1.2k/50k, cost $0.0031/$2.50, time 3m/30m')
    expect(describeSpend(goal({ spent: { tokens: 2_500_000, costUsd: null, activeTimeMs: 1000, calls: 9 } }))).toBe('tokens 2.5M, cost unknown')
  })

  it('words every turn outcome, an unknown kind included', () => {
    expect([
      { kind: 'completed' },
      { kind: 'aborted', cause: 'policy' },
      { kind: 'error', code: 'RATE_LIMIT', message: 'slow down' },
      { kind: 'error', code: 'MAX_STEPS', message: 'the turn reached the limit of 3 steps' },
      { kind: 'max-tokens' },
      { kind: 'preempted', cause: 'human message m1 arrived during goal round 2' },
      { kind: 'disposed' },
      { kind: 'interrupted' },
      { kind: 'future-kind' } as unknown as TurnOutcome,
      undefined,
    ].map((outcome) => describeTurnOutcome(outcome as TurnOutcome | undefined))).toEqual([
      'completed',
      'cancelled (policy)',
      'failed: RATE_LIMIT: slow down',
      'reached the step limit: the turn reached the limit of 3 steps',
      'stopped at the output token limit',
      'ended early: human message m1 arrived during goal round 2',
      'ended by shutdown',
      'interrupted (the process stopped; repaired on the next open)',
      'ended: future-kind',
      'ended: unknown',
    ])
  })
})

describe('the evidence a goal stands on', () => {
  const passed = { verify: ['npm test', 'npm run lint'], verification: { attempts: 2, failures: 1, last: { command: 'npm run lint', ok: true, exitCode: 0 } } }
  const failed = { verify: ['npm test'], verification: { attempts: 1, failures: 1, last: { command: 'npm test', ok: false, exitCode: 1 } } }
  const judged = (verdict: 'met' | 'not-met' | 'cannot-tell', accepted: boolean) => ({
    judgement: { attempts: 1, rejectionsInARow: accepted ? 0 : 1, last: { judge: 'cheap', verdict, accepted, reasons: ['done.txt says draft.', 'more'], missing: [], diff: null } },
  })

  it('words a completion by what it was decided on', () => {
    expect([
      goal({ phase: 'complete', ...passed, ...judged('met', true) }),
      goal({ phase: 'complete', verify: ['npm test'], verification: { attempts: 1, failures: 0, last: { command: 'npm test', ok: true, exitCode: 0 } } }),
      goal({ phase: 'complete', ...judged('cannot-tell', true) }),
      goal({ phase: 'complete', completedBy: 'person', ...passed }),
      goal({ phase: 'complete' }),
    ].map(describeGoalStatus)).toEqual([
      'complete (verified: 2 checks passed; judged met by cheap)',
      'complete (verified: 1 check passed)',
      'complete (accepted although cheap could not tell)',
      'complete (completed by a person)',
      'complete (not verified)',
    ])
    expect(describeVerification(goal({ phase: 'complete', ...failed }))).toBe('not verified')
  })

  it('says why a goal is not complete: the failing check first, else the judge\'s refusal', () => {
    expect([
      goal({ ...failed, ...judged('not-met', false) }),
      goal({ ...failed, verification: { ...failed.verification, last: { ...failed.verification.last, exitCode: null } } }),
      goal({ ...passed, ...judged('not-met', false) }),
      { ...blocked(BLOCK.judgeRejected), ...judged('cannot-tell', false) },
      goal({ ...passed }),
      goal({ ...judged('met', true) }),
    ].map(describeGoalStatus)).toEqual([
      'active (armed); not complete: check `npm test` failed with exit code 1',
      'active (armed); not complete: check `npm test` failed without an exit code',
      'active (armed); not complete: judged not met by cheap: done.txt says draft.',
      'blocked (judge-rejected); not complete: cheap could not tell: done.txt says draft.',
      'active (armed)',
      'active (armed)',
    ])
  })
})

describe('the token rule', () => {
  it('counts input minus cached input, plus output', () => {
    expect(tokensOf({ inputTokens: 1000, cachedInputTokens: 600, outputTokens: 50 })).toBe(450)
    expect(tokensOf({ inputTokens: 10, outputTokens: 5 })).toBe(15)
    expect(tokensOf(undefined)).toBe(0)
  })
})
