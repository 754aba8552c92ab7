import type { Context } from 'cordis'
import type { Agent, PromptDecision, Submission } from '@goalkeeper/agent-loop'
import type { UserMessage } from '@goalkeeper/session'
import { isGoalSourced, roundViolation } from './rounds.ts'
import type { GoalService, GoalState } from './types.ts'

/**
 * `agent/prompt-submit` listener: judged on the decision that comes back from `next()`, it keeps at
 * most one goal-sourced message, and only if it is the legal next round of the live goal. The loop
 * records `input/rejected` for whatever is missing from the decision.
 */
export function createRoundAdmission(ctx: Context, goals: GoalService) {
  const logger = ctx.logger('goal')
  return async (agent: Agent, _submission: Submission, next: () => Promise<PromptDecision>): Promise<PromptDecision> => {
    const decision = await next()
    if (decision?.kind !== 'submit' || !Array.isArray(decision.messages) || !decision.messages.some(isGoalSourced)) return decision
    let goal: GoalState | undefined
    try {
      goal = goals.get(agent)
    } catch (error) {
      // No trustworthy goal state: no round can be legal, but human input in the batch still goes through.
      logger.warn('agent %s: dropping goal rounds, the goal state is unavailable: %s', agent.id, (error as Error)?.message)
    }
    let admitted = false
    const messages = decision.messages.filter((message) => {
      if (!isGoalSourced(message)) return true
      const violation = admitted ? 'only one goal round can open per turn' : roundViolation(goal, message.source)
      if (violation) {
        logger.info('agent %s: dropped goal-sourced message %s: %s', agent.id, message.id, violation)
        return false
      }
      admitted = true
      return true
    })
    return messages.length === decision.messages.length ? decision : { ...decision, messages }
  }
}

/**
 * `agent/admit` listener: the same legality check, made synchronously in the tick the turn opens, so a goal
 * mutation that lands after the waterfall returned cannot leave an illegal round in the log. It also keeps
 * a batch to one round when a listener outside the admission above put a dropped one back.
 */
export function createRoundLastWord(ctx: Context, goals: GoalService) {
  const logger = ctx.logger('goal')
  // The loop asks about every message of an admission in one tick and appends them only afterwards, so a
  // round passed earlier in the tick is not in the fold yet: it is remembered until the tick ends.
  const passed = new Set<string>()
  return (agent: Agent, message: UserMessage): string | undefined => {
    if (!isGoalSourced(message)) return
    let goal: GoalState | undefined
    try {
      goal = goals.get(agent)
    } catch {
      return 'goal-state-unavailable'
    }
    const violation = passed.has(agent.id) ? 'only one goal round can open per turn' : roundViolation(goal, message.source)
    if (violation) {
      logger.info('agent %s: vetoed goal-sourced message %s as the turn opened: %s', agent.id, message.id, violation)
      return 'illegal-goal-round'
    }
    passed.add(agent.id)
    queueMicrotask(() => passed.delete(agent.id))
  }
}
