import { budgetsReached, type Goal } from '@goalkeeper/goal'

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
