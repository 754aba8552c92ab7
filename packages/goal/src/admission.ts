import type { Context } from 'cordis'
import type { Agent, PromptDecision, Submission } from '@goalkeeper/agent-loop'
import type { UserMessage } from '@goalkeeper/session'
import { isGoalSourced, roundViolation } from './rounds.ts'
import type { GoalService } from './types.ts'

interface Refusal {
  /** The `input/rejected` reason when the refusal comes as the turn opens. */
  code: 'illegal-goal-round' | 'goal-state-unavailable'
  why: string
}

/**
 * The goal package's answer to "may this goal-sourced message open a turn now": only the legal next round
 * of a goal whose log can be read, and only one per turn (`another`: a round already passed). Both
 * listeners below ask only this.
 */
function refusal(goals: GoalService, agent: Agent, message: UserMessage, another: boolean): Refusal | undefined {
  if (another) return { code: 'illegal-goal-round', why: 'only one goal round can open per turn' }
  const health = goals.health(agent)
  // No trustworthy goal state: no round can be legal, but human input in the batch still goes through.
  if (!health.ok) return { code: 'goal-state-unavailable', why: `the goal state is unavailable: ${health.error.message}` }
  const why = roundViolation(goals.get(agent), message.source)
  return why ? { code: 'illegal-goal-round', why } : undefined
}

/**
 * `agent/prompt-submit` listener: judged on the decision that comes back from `next()`, it keeps at
 * most one goal-sourced message, and only if it is the legal next round of the live goal. The loop
 * records `input/rejected` for whatever is missing from the decision.
 */
export function dropIllegalRoundsOnSubmit(ctx: Context, goals: GoalService) {
  const logger = ctx.logger('goal')
  return async (agent: Agent, _submission: Submission, next: () => Promise<PromptDecision>): Promise<PromptDecision> => {
    const decision = await next()
    if (decision?.kind !== 'submit' || !Array.isArray(decision.messages) || !decision.messages.some(isGoalSourced)) return decision
    let admitted = false
    const messages = decision.messages.filter((message) => {
      if (!isGoalSourced(message)) return true
      const refused = refusal(goals, agent, message, admitted)
      if (refused) logger.info('agent %s: dropped goal-sourced message %s: %s', agent.id, message.id, refused.why)
      else admitted = true
      return !refused
    })
    return messages.length === decision.messages.length ? decision : { ...decision, messages }
  }
}

/**
 * `agent/admit` listener: the same check, made synchronously in the tick the turn opens, so a goal
 * mutation that lands after the waterfall returned cannot leave an illegal round in the log. It also keeps
 * a batch to one round when a listener outside the admission above put a dropped one back.
 */
export function vetoIllegalRoundOnAdmit(ctx: Context, goals: GoalService) {
  const logger = ctx.logger('goal')
  // The loop asks about every message of an admission in one tick and appends them only afterwards, so a
  // round passed earlier in the tick is not in the fold yet: it is remembered until the tick ends.
  const passed = new Set<string>()
  return (agent: Agent, message: UserMessage): string | undefined => {
    if (!isGoalSourced(message)) return
    const refused = refusal(goals, agent, message, passed.has(agent.id))
    if (refused) {
      logger.info('agent %s: vetoed goal-sourced message %s as the turn opened: %s', agent.id, message.id, refused.why)
      return refused.code
    }
    passed.add(agent.id)
    queueMicrotask(() => passed.delete(agent.id))
  }
}
