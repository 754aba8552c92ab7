import type { TurnOutcome } from '@goalkeeper/session'
import { BLOCK } from './block-codes.ts'
import { formatBudgetUsd, formatDuration } from './budgets.ts'
import type { Goal, GoalActivation } from './types.ts'

/*
 * What people read about a goal, worded once for every front end (the CLI, `/goal`, ACP): its phase, its
 * spend and how a turn ended.
 */

/**
 * A goal's phase in words: `complete`, `paused`, `out of rounds`, `out of budget`, `blocked (refused)`,
 * `active (armed)`, `active (disarmed)`. Activation is named only while the goal is active, the one phase
 * where it tells something.
 */
export function describePhase(goal: Pick<Goal, 'phase' | 'blockedReason'> & { activation?: GoalActivation }): string {
  switch (goal.phase) {
    case 'active': return `active (${goal.activation ?? 'disarmed'})`
    case 'blocked': {
      const code = goal.blockedReason?.code
      if (code === BLOCK.roundLimit) return 'out of rounds'
      if (code === BLOCK.budgetLimited) return 'out of budget'
      return code ? `blocked (${code})` : 'blocked'
    }
    default: return goal.phase
  }
}

/**
 * What a completion was decided on: `verified: 2 checks passed; judged met by cheap-model`, `judged met by
 * cheap-model`, `completed by a person` (`/goal complete`), or `not verified` when neither a passing check nor
 * an accepting judge stood behind it. The check stops at its first failing command, so a last run that
 * passed ran every command of `verify`.
 */
export function describeVerification(goal: Pick<Goal, 'verify' | 'verification' | 'judgement' | 'completedBy'>): string {
  if (goal.completedBy === 'person') return 'completed by a person'
  const parts: string[] = []
  if (goal.verify && goal.verification?.last.ok) parts.push(`verified: ${plural(goal.verify.length, 'check')} passed`)
  const judged = goal.judgement?.last
  if (judged?.accepted) parts.push(judged.verdict === 'met' ? `judged met by ${judged.judge}` : `accepted although ${judged.judge} could not tell`)
  return parts.length ? parts.join('; ') : 'not verified'
}

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`

/**
 * Why a goal that is not complete did not complete on its last try: its check failed (`check \`npm test\`
 * failed with exit code 1`), or the judge refused (`judged not met by cheap: done.txt says draft`). The check
 * runs first and the judge only when it passed, so a failing last check is the newer news. Undefined when
 * neither ran, or the goal is complete.
 */
export function describeShortfall(goal: Pick<Goal, 'phase' | 'verification' | 'judgement'>): string | undefined {
  if (goal.phase === 'complete') return undefined
  const check = goal.verification?.last
  if (check && !check.ok) return `check \`${check.command}\` failed ${check.exitCode === null ? 'without an exit code' : `with exit code ${check.exitCode}`}`
  const judged = goal.judgement?.last
  if (!judged || judged.accepted) return undefined
  const verdict = judged.verdict === 'not-met' ? `judged not met by ${judged.judge}` : `${judged.judge} could not tell`
  return `${verdict}: ${judged.reasons[0] ?? 'no reason given'}`
}

/**
 * A goal's state with its evidence, the one wording every front end shows: `complete (verified: 2 checks
 * passed; judged met by cheap)`, `active (armed); not complete: check \`npm test\` failed with exit code 1`,
 * `blocked (judge-rejected); not complete: judged not met by cheap: ...`, or the phase alone.
 */
export function describeGoalStatus(goal: Pick<Goal, 'phase' | 'blockedReason' | 'verify' | 'verification' | 'judgement' | 'completedBy'> & { activation?: GoalActivation }): string {
  if (goal.phase === 'complete') return `complete (${describeVerification(goal)})`
  const shortfall = describeShortfall(goal)
  return shortfall ? `${describePhase(goal)}; not complete: ${shortfall}` : describePhase(goal)
}

/** 850, 1.2k, 3.4M: short enough for a progress line. */
export function formatTokens(tokens: number): string {
  if (tokens < 1000) return String(tokens)
  if (tokens < 1_000_000) return `${trim(tokens / 1000)}k`
  return `${trim(tokens / 1_000_000)}M`
}

/** Dollars with enough digits to see a cheap model's cost move: $0.0031, $1.25. */
export function formatUsd(amount: number): string {
  return `$${amount < 1 ? amount.toFixed(4) : amount.toFixed(2)}`
}

const trim = (value: number) => value.toFixed(1).replace(/\.0$/, '')

/**
 * What a goal's rounds spent against its budgets: `tokens 1.2k/50k, cost $0.0031/$2.50, time 3m/30m`.
 * Undefined for a goal that has neither budgets nor counted tokens, so plain goals read as before. An unknown
 * price reads `cost unknown`, never $0.
 */
export function describeSpend(goal: Pick<Goal, 'budgets' | 'spent'>): string | undefined {
  const budgets = goal.budgets ?? {}
  const spent = goal.spent ?? { tokens: 0, costUsd: 0, activeTimeMs: 0, calls: 0 }
  if (!goal.budgets && !spent.tokens && !spent.costUsd) return undefined
  const of = (used: string, limit: string | undefined) => (limit === undefined ? used : `${used}/${limit}`)
  const parts = [`tokens ${of(formatTokens(spent.tokens), budgets.tokens === undefined ? undefined : formatTokens(budgets.tokens))}`]
  if (budgets.costUsd !== undefined || spent.costUsd !== 0) {
    const used = spent.costUsd === null ? 'unknown' : formatUsd(spent.costUsd)
    parts.push(`cost ${of(used, budgets.costUsd === undefined ? undefined : formatBudgetUsd(budgets.costUsd))}`)
  }
  if (budgets.activeTimeMs !== undefined) parts.push(`time ${of(formatDuration(spent.activeTimeMs), formatDuration(budgets.activeTimeMs))}`)
  return parts.join(', ')
}

/** The agent loop's error code for a turn that used all its model calls (`maxSteps`). */
const STEP_LIMIT = 'MAX_STEPS'

/** How a turn ended, in words: `completed`, `cancelled (user)`, `failed: AUTH: ...`. */
export function describeTurnOutcome(outcome: TurnOutcome | undefined): string {
  switch (outcome?.kind) {
    case 'completed': return 'completed'
    case 'aborted': return `cancelled (${outcome.cause})`
    case 'preempted': return `ended early: ${outcome.cause}`
    // A turn at the step limit did not fail: a goal round there counts as used and the next one goes on.
    case 'error': return outcome.code === STEP_LIMIT ? `reached the step limit: ${outcome.message}` : `failed: ${outcome.code}: ${outcome.message}`
    case 'max-tokens': return 'stopped at the output token limit'
    case 'disposed': return 'ended by shutdown'
    case 'interrupted': return 'interrupted (the process stopped; repaired on the next open)'
    default: return `ended: ${(outcome as { kind?: string } | undefined)?.kind ?? 'unknown'}`
  }
}
