import type { Context } from 'cordis'
import Schema from 'schemastery'
import { RoundDriver } from './driver.ts'

export * from './types.ts'
export { renderGoalRoundPrompt } from './prompt.ts'
export { settleRound, DRIVER_BLOCK_CODES, STEP_LIMIT_CODE, type RoundEnd, type RoundSettlement } from './settlement.ts'
export type { RoundState } from './round.ts'
export { interruptWork, type InterruptAction } from './interrupt.ts'

export const name = 'goal-session'
export const inject = ['sessions', 'agents', 'goals']

/** No configuration: the round cap belongs to the goal, the block threshold to the goal tool. */
export const Config = Schema.object({})

export const apply = (ctx: Context) => {
  new RoundDriver(ctx).install()
}
