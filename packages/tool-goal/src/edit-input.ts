import type { GoalBudgets } from '@goalkeeper/goal'

/** The `ctx.goals.edit` input with only the fields that were given (an absent field means "keep"). */
export function editInput(objective: string | undefined, maxGoalRounds: number | undefined, budgets?: GoalBudgets): { objective?: string; maxGoalRounds?: number; budgets?: GoalBudgets } {
  const input: { objective?: string; maxGoalRounds?: number; budgets?: GoalBudgets } = {}
  if (objective !== undefined) input.objective = objective
  if (maxGoalRounds !== undefined) input.maxGoalRounds = maxGoalRounds
  if (budgets !== undefined) input.budgets = budgets
  return input
}
