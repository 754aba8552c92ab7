import { budgetsReached, formatBudgetUsd, formatDuration, type Goal } from '@goalkeeper/goal'

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

/**
 * The `goal` options that raise every budget a blocked goal used up (each to twice its limit, or more if the
 * spend is already past that), so the printed command resumes the goal in one go; undefined when raising
 * cannot help (a cost that has no known price). A dollar amount is rounded up to the cent, the form the
 * CLI's `--cost-budget` accepts (never `0.00`).
 */
export function raiseBudgetArgs(goal: Pick<Goal, 'budgets' | 'spent'>): string[] | undefined {
  const reached = budgetsReached(goal)
  if (!reached.length || reached.some((one) => one.used === null)) return undefined
  return reached.flatMap((one) => {
    const next = Math.max(one.limit * 2, one.used! + one.limit)
    switch (one.budget) {
      case 'tokens': return ['--token-budget', String(next)]
      case 'costUsd': return ['--cost-budget', (Math.ceil(Math.round(next * 1e6) / 1e4) / 100).toFixed(2)]
      case 'activeTimeMs': return ['--time-budget', `${Math.ceil(next / 60_000)}m`]
    }
  })
}
