import type { Context } from 'cordis'
import Schema from 'schemastery'
import type { Agent, StepSummary } from '@goalkeeper/agent-loop'
import { BudgetMeter, type BudgetConfig } from './meter.ts'

export { costOf, priceKey, tokensOf, type ModelPrice } from './prices.ts'
export type { BudgetConfig } from './meter.ts'

export const name = 'goal-budget'
export const inject = ['goals', 'agents', 'models']

const Price = Schema.object({
  input: Schema.number().min(0).required().description('US dollars per million input tokens.'),
  cachedInput: Schema.number().min(0).description('US dollars per million cached input tokens (default: input).'),
  output: Schema.number().min(0).required().description('US dollars per million output tokens.'),
})

export const Config: Schema<BudgetConfig> = Schema.object({
  prices: Schema.dict(Price).default({})
    .description('Prices by `vendor/model` (e.g. `deepseek/deepseek-chat`), over the bundled @pydantic/genai-prices table.'),
})

export const apply = (ctx: Context, config: BudgetConfig) => {
  const meter = new BudgetMeter(ctx, config)
  ctx.effect(function* () {
    yield ctx.on('agent/turn-start', (agent: Agent, turn: number) => meter.onTurnStart(agent, turn))
    yield ctx.on('agent/step-end', (agent: Agent, turn: number, step: number, summary: StepSummary) => meter.onStepEnd(agent, turn, step, summary))
    yield ctx.on('agent/disposed', (agent: Agent) => meter.forget(agent))
  }, 'goal-budget')
}
