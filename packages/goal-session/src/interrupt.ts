import type { Agent } from '@goalkeeper/agent-loop'
import { isRunnable, type GoalService } from '@goalkeeper/goal'

export type InterruptAction = 'cancelled' | 'paused'

/**
 * What a person's "stop" (Ctrl-C in the CLI, `session/cancel` over ACP) stops: the running (or queued)
 * work is cancelled with reason `user`, which makes the driver pause a goal round; between two rounds,
 * when nothing runs but the goal is armed, the goal is paused instead. Returns undefined when there was
 * nothing to stop.
 */
export function interruptWork(agent: Agent, goals: GoalService | undefined): InterruptAction | undefined {
  if (agent.disposed) return undefined
  if ((agent.status === 'running' || agent.queued.length) && agent.cancel('user')) return 'cancelled'
  // A goal that cannot be read (a corrupt log) leaves nothing to stop here.
  const goal = goals?.get(agent)
  if (!isRunnable(goal)) return undefined
  goals!.pause(agent, { id: goal.id, revision: goal.revision })
  return 'paused'
}
