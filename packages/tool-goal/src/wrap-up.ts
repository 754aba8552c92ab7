import type { Context } from 'cordis'
import type {} from '@goalkeeper/agent-loop'
import type { GoalPhase } from '@goalkeeper/goal'
import { describeError } from '@goalkeeper/kit'
import { wrapUpRefusal } from './prompt.ts'

/** Who refuses the calls (the `denied.by` of their results). */
export const WRAP_UP_BY = 'tool-goal'

/**
 * Holds the model to its wrap-up after it completed or blocked the goal from a goal round at `step`: calls
 * made in that same step run (the model chose them together, before it saw the result), the next step is
 * the turn's one wrap-up and may only answer in text, and a tool call from it on is refused and ends the
 * turn. The agent loop does the holding (`agent.wrapUp`), the one mechanism every stop shares.
 */
export function holdToWrapUp(ctx: Context, agentId: string, turn: number, step: number, phase: GoalPhase): void {
  try {
    ctx.get('agents')?.get(agentId)?.wrapUp(turn, { by: WRAP_UP_BY, reason: wrapUpRefusal(phase), fromStep: step + 1, modelCalls: 1 })
  } catch (error) {
    ctx.logger('tool-goal').warn('agent %s: holding turn %d to its wrap-up failed: %s', agentId, turn, describeError(error))
  }
}
