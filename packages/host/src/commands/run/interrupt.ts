import type { Agent } from '@goalkeeper/agent-loop'
import type { GoalService } from '@goalkeeper/goal'

export type InterruptAction = 'cancelled' | 'paused'

/**
 * What Ctrl-C stops: the running (or queued) work is cancelled with reason `user`, which pauses a goal
 * round; between two rounds, when nothing runs but the goal is armed, the goal is paused instead.
 * Returns undefined when there was nothing to stop.
 */
export function interruptWork(agent: Agent, goals: GoalService | undefined): InterruptAction | undefined {
  if (agent.disposed) return undefined
  if ((agent.status === 'running' || agent.queued.length) && agent.cancel('user')) return 'cancelled'
  // A goal that cannot be read (a corrupt log) leaves nothing for Ctrl-C to stop here.
  const goal = goals?.get(agent)
  if (goal?.phase !== 'active' || goal.activation !== 'armed') return undefined
  goals!.pause(agent, { id: goal.id, revision: goal.revision })
  return 'paused'
}

export function describeInterrupt(action: InterruptAction): string {
  return action === 'cancelled' ? 'Ctrl-C: cancelled the running turn' : 'Ctrl-C: paused the goal'
}
