import type { Context } from 'cordis'
import type { Agent, ToolCallInfo } from '@goalkeeper/agent-loop'
import type { GoalPhase } from '@goalkeeper/goal'
import type { ToolCallReview, ToolCallVerdict, ToolResult } from '@goalkeeper/tools'
import { describeError } from '@goalkeeper/kit'
import { wrapUpRefusal } from './prompt.ts'

/** Who refuses the calls (the `denied.by` of their results). */
export const WRAP_UP_BY = 'tool-goal'

interface Settled {
  turn: number
  /** The step of the `update_goal` call; the step after it is the wrap-up. */
  step: number
  phase: GoalPhase
}

/**
 * Holds the model to its wrap-up after it completed or blocked the goal from a goal round: calls made in
 * the same step as `update_goal` run (the model chose them together, before it saw the result), the next
 * step is the wrap-up, and any tool call from then on is refused in `tool/before-call` and ends the turn
 * with `cancel('policy', { turn })` once its refusal is recorded.
 */
export class WrapUps {
  private settled = new Map<string, Settled>()

  constructor(private ctx: Context) {}

  install(): void {
    const ctx = this.ctx
    const wrapUps = this
    ctx.effect(function* () {
      yield ctx.on('tool/before-call', async (review: ToolCallReview, next: () => Promise<ToolCallVerdict>) => wrapUps.review(review) ?? next())
      yield ctx.on('agent/tool-end', (agent: Agent, info: ToolCallInfo, result: ToolResult) => wrapUps.onToolEnd(agent, info, result))
      yield ctx.on('agent/turn-end', (agent: Agent, turn: number) => wrapUps.forget(agent, turn))
      yield ctx.on('agent/disposed', (agent: Agent) => wrapUps.forget(agent))
      yield () => wrapUps.settled.clear()
    }, 'tool-goal wrap-up')
  }

  /** The model completed or blocked the goal from a goal round at this call. */
  mark(agentId: string, turn: number, step: number, phase: GoalPhase): void {
    this.settled.set(agentId, { turn, step, phase })
  }

  private review(review: ToolCallReview): ToolCallVerdict | undefined {
    const { agent, turn, step } = review.call
    const settled = this.settled.get(agent.id)
    if (!settled || settled.turn !== turn || step <= settled.step) return undefined
    return { kind: 'deny', by: WRAP_UP_BY, reason: wrapUpRefusal(settled.phase) }
  }

  /** The refusal is in the session now (`tool/result` with `denied`): end the turn there. */
  private onToolEnd(agent: Agent, info: ToolCallInfo, result: ToolResult): void {
    const settled = this.settled.get(agent.id)
    if (!settled || settled.turn !== info.turn || info.step <= settled.step || result.denied?.by !== WRAP_UP_BY) return
    try {
      agent.cancel('policy', { turn: info.turn })
    } catch (error) {
      this.ctx.logger('tool-goal').warn('agent %s: ending turn %d after its wrap-up failed: %s', agent.id, info.turn, describeError(error))
    }
  }

  private forget(agent: { id: string }, turn?: number): void {
    if (turn === undefined || this.settled.get(agent.id)?.turn === turn) this.settled.delete(agent.id)
  }
}
