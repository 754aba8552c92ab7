import type { Context } from 'cordis'
import Schema from 'schemastery'
import type { Agent, StepSummary } from '@goalkeeper/agent-loop'
import type { GoalChange } from '@goalkeeper/goal'
import type { ProviderDescription } from '@goalkeeper/model'
import type { Usage } from '@goalkeeper/session'
import { BudgetMeter, type BudgetConfig } from './meter.ts'
import { costOf, unpricedCostBudget, type CostBudgetProblem } from './prices.ts'

export { costOf, priceKey, priceKnown, unpricedCostBudget, type CostBudgetProblem, type ModelPrice } from './prices.ts'
/** The goal package's one token rule, re-exported where budgets were always counted. */
export { tokensOf } from '@goalkeeper/goal'
export type { BudgetConfig } from './meter.ts'

export const name = 'goal-budget'
export const inject = ['goals', 'agents', 'models']

const Price = Schema.object({
  input: Schema.number().min(0).required().description('US dollars per million input tokens.'),
  cachedInput: Schema.number().min(0).description('US dollars per million cached input tokens (default: input).'),
  cacheWriteInput: Schema.number().min(0).description('US dollars per million input tokens written to a prompt cache (default: input).'),
  output: Schema.number().min(0).required().description('US dollars per million output tokens.'),
})

export const Config: Schema<BudgetConfig> = Schema.object({
  prices: Schema.dict(Price).default({})
    .description('Prices by `vendor/model` (e.g. `deepseek/deepseek-chat`), over the bundled @pydantic/genai-prices table.'),
})

/** `ctx.goalBudget`: present while budgets are counted (a host refuses budgets nobody would enforce), and the price of a call. */
export interface GoalBudgetService {
  costOf(description: ProviderDescription | undefined, usage: Usage | undefined): number | null
  /**
   * Why a cost budget of `costUsd` cannot be kept on the model provider registered as `model` (no known
   * price: `fix` names the `prices` key to set, with an example), or undefined when it can. Front ends
   * refuse such a budget before the goal starts, instead of letting a paid round run and then stopping.
   */
  costBudgetProblem(model: string, costUsd: number): CostBudgetProblem | undefined
}

declare module 'cordis' {
  interface Context {
    /** Counts a goal's rounds and blocks it at its budget (section 12). */
    goalBudget: GoalBudgetService
  }
}

export const apply = (ctx: Context, config: BudgetConfig) => {
  const meter = new BudgetMeter(ctx, config)
  ctx.effect(function* () {
    yield ctx.provide('goalBudget', {
      costOf: (description, usage) => costOf(description, usage, config.prices),
      costBudgetProblem: (model, costUsd) => unpricedCostBudget(ctx.models.describe(model), model, costUsd, config.prices),
    } satisfies GoalBudgetService)
    yield ctx.on('agent/turn-start', (agent: Agent, turn: number) => meter.onTurnStart(agent, turn))
    yield ctx.on('agent/step-end', (agent: Agent, turn: number, step: number, summary: StepSummary) => meter.onStepEnd(agent, turn, step, summary))
    yield ctx.on('goal/changed', (agent: Agent, change: GoalChange) => meter.onGoalChanged(agent, change))
    yield ctx.on('agent/disposed', (agent: Agent) => meter.forget(agent))
  }, 'goal-budget')
}
