import { GoalError } from './errors.ts'
import type { Goal, GoalBudgets, GoalSpend, GoalUsage } from './types.ts'

export const GOAL_USAGE_RECORD = 'goal/usage'

const BUDGET_KEYS = ['activeTimeMs', 'costUsd', 'tokens'] as const
export type BudgetName = (typeof BUDGET_KEYS)[number]

/** What a reached budget is, for a block reason, a refusal or a progress line. */
export interface BudgetReached {
  budget: BudgetName
  /** The limit and what was spent against it; `used` is null for a cost whose price is unknown. */
  limit: number
  used: number | null
  /** What was spent against what, in words: `1200 of 1000 tokens`, `$0.0130 of $0.01`, or why it cannot be told. */
  spent: string
  /** The sentence for a block reason or a refusal: the budget, and `spent`. */
  message: string
}

/**
 * Checks budgets given to create or edit: each a positive finite number, tokens and time whole. Returns a
 * fresh object holding only the keys given, or undefined when none were.
 */
export function normalizeBudgets(value: unknown): GoalBudgets | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new GoalError('GOAL_INVALID_BUDGET', 'Budgets are an object { tokens?, costUsd?, activeTimeMs? }.')
  }
  const extra = Object.keys(value).filter((key) => !(BUDGET_KEYS as readonly string[]).includes(key))
  if (extra.length) throw new GoalError('GOAL_INVALID_BUDGET', `Budgets have only tokens, costUsd and activeTimeMs; remove ${extra.join(', ')}.`)
  const budgets: GoalBudgets = {}
  for (const key of BUDGET_KEYS) {
    const amount = (value as Record<string, unknown>)[key]
    if (amount === undefined) continue
    const whole = key !== 'costUsd'
    if (typeof amount !== 'number' || !Number.isFinite(amount) || amount <= 0 || (whole && !Number.isSafeInteger(amount))) {
      throw new GoalError('GOAL_INVALID_BUDGET', `The ${describeBudget(key)} budget must be a positive ${whole ? 'whole ' : ''}number, got ${JSON.stringify(amount) ?? String(amount)}.`)
    }
    budgets[key] = amount
  }
  return Object.keys(budgets).length ? budgets : undefined
}

/** The spend after one more model call of the goal. A call of unknown price makes the cost unknown for good. */
export function addUsage(spent: GoalSpend | undefined, usage: Pick<GoalUsage, 'tokens' | 'costUsd' | 'activeTimeMs'>): GoalSpend {
  const before = spent ?? { tokens: 0, costUsd: 0, activeTimeMs: 0, calls: 0 }
  return {
    tokens: before.tokens + usage.tokens,
    costUsd: before.costUsd === null || usage.costUsd === null ? null : before.costUsd + usage.costUsd,
    activeTimeMs: before.activeTimeMs + usage.activeTimeMs,
    calls: before.calls + 1,
  }
}

/**
 * The first budget of `goal` that is used up, or undefined. A cost budget with a spend of unknown price
 * counts as reached: it can no longer be checked, and guessing zero would let the goal spend without bound.
 */
export function budgetReached(goal: Pick<Goal, 'budgets' | 'spent'>): BudgetReached | undefined {
  return budgetsReached(goal)[0]
}

/** Every budget of `goal` that is used up (tokens, cost, time): what must all be raised before it can resume. */
export function budgetsReached(goal: Pick<Goal, 'budgets' | 'spent'>): BudgetReached[] {
  const budgets = goal.budgets
  if (!budgets) return []
  const spent = goal.spent ?? { tokens: 0, costUsd: 0, activeTimeMs: 0, calls: 0 }
  const reached: BudgetReached[] = []
  const usedUp = (budget: BudgetName, limit: number, used: number, words: string): BudgetReached =>
    ({ budget, limit, used, spent: words, message: `The ${describeBudget(budget)} budget is used up: ${words}.` })
  if (budgets.tokens !== undefined && spent.tokens >= budgets.tokens) {
    reached.push(usedUp('tokens', budgets.tokens, spent.tokens, `${spent.tokens} of ${budgets.tokens} tokens`))
  }
  if (budgets.costUsd !== undefined) {
    if (spent.costUsd === null) {
      const words = 'a model call of this goal has no known price'
      reached.push({ budget: 'costUsd', limit: budgets.costUsd, used: null, spent: words, message: `The cost budget (${formatBudgetUsd(budgets.costUsd)}) cannot be checked: ${words}. Set the model's price in cordis.yml (goal-budget prices).` })
    } else if (spent.costUsd >= budgets.costUsd) {
      reached.push(usedUp('costUsd', budgets.costUsd, spent.costUsd, `$${spent.costUsd.toFixed(4)} of ${formatBudgetUsd(budgets.costUsd)}`))
    }
  }
  if (budgets.activeTimeMs !== undefined && spent.activeTimeMs >= budgets.activeTimeMs) {
    reached.push(usedUp('activeTimeMs', budgets.activeTimeMs, spent.activeTimeMs, `${formatDuration(spent.activeTimeMs)} of ${formatDuration(budgets.activeTimeMs)} in rounds`))
  }
  return reached
}

/** A budget in dollars as a person gave it: at least the cents ($2.50, $0.01), more digits only when given ($0.005). */
export function formatBudgetUsd(amount: number): string {
  const text = String(amount)
  const decimals = /\.(\d+)$/.exec(text)?.[1].length ?? 0
  return `$${decimals <= 2 ? amount.toFixed(2) : text}`
}

export function describeBudget(name: BudgetName): string {
  return name === 'tokens' ? 'token' : name === 'costUsd' ? 'cost' : 'time'
}

/** `1h 5m`, `30m`, `45s`: whole units, for people. */
export function formatDuration(ms: number): string {
  const seconds = Math.round(ms / 1000)
  if (seconds < 60) return `${seconds}s`
  const minutes = Math.floor(seconds / 60)
  if (minutes < 60) return seconds % 60 ? `${minutes}m ${seconds % 60}s` : `${minutes}m`
  return minutes % 60 ? `${Math.floor(minutes / 60)}h ${minutes % 60}m` : `${Math.floor(minutes / 60)}h`
}
