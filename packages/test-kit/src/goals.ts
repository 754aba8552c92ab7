import type { Context } from 'cordis'
import type { Agent } from '@goalkeeper/agent-loop'
import type { GoalState } from '@goalkeeper/goal'

/** Resolves with the agent's goal once `predicate` holds for it: checked now and after every goal event. */
export function untilGoal(root: Context, agent: Agent, predicate: (goal: GoalState | undefined) => boolean): Promise<GoalState | undefined> {
  return new Promise((resolve) => {
    const check = () => {
      const goal = root.goals.get(agent)
      if (!predicate(goal)) return
      disposers.forEach((dispose) => dispose())
      resolve(goal)
    }
    const disposers = [root.on('goal/changed', check), root.on('goal/activation', check)]
    check()
  })
}

/**
 * Resolves once the agent's goal stopped being runnable (gone, not active, or disarmed) and the agent has
 * nothing left to do, with the goal as it is then.
 */
export async function untilGoalStops(root: Context, agent: Agent): Promise<GoalState | undefined> {
  const goal = await untilGoal(root, agent, (g) => !g || g.phase !== 'active' || g.activation !== 'armed')
  await agent.whenIdle()
  return root.goals.get(agent) ?? goal
}
