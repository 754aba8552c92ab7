import type { Context } from 'cordis'

/** The part of goal-budget's `ctx.goalBudget` read here: whether a cost budget can be kept on a model. */
interface CostBudgetVet {
  costBudgetProblem(model: string, costUsd: number): { message: string; fix: string } | undefined
}

// Looked up by name: tool-goal works without goal-budget, which is the package that declares the service.
const vetOf = (ctx: Context) => (ctx.get as (name: string) => unknown)('goalBudget') as CostBudgetVet | undefined

/** Code of a refused cost budget whose model has no known price. */
export const COST_UNPRICED = 'GOAL_COST_UNPRICED'

/**
 * Why a cost budget of `costUsd` on the agent's model is refused, or undefined: with no known price the goal
 * would run one paid round and then stop as out of budget. The text names the `prices` key to set.
 */
export function costBudgetRefusal(ctx: Context, agentId: string, costUsd: number | undefined): string | undefined {
  const model = costUsd === undefined ? undefined : ctx.get('agents')?.get(agentId)?.model
  const problem = model === undefined ? undefined : vetOf(ctx)?.costBudgetProblem(model, costUsd!)
  return problem && `${problem.message}; ${problem.fix}`
}
