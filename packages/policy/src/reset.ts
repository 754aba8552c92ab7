import type { Context } from 'cordis'
import type { GoalActivation } from '@goalkeeper/goal'

/**
 * The listeners that start a policy's counts over for an agent, to be yielded inside the plugin's effect:
 * `yield* resetOnRearm(ctx, (agentId) => ...)`. They fire on
 * - a goal armed by a human (create, or `/goal resume` after a pause or a block): the resumed rounds must not
 *   inherit the streak that led to the pause;
 * - `policy/settled` from any policy: the streaks that led there are over, and a continue must not run into
 *   another plugin's stale count (a stop ends the run; the next one starts with a human act).
 * Nothing else resets, a human message included: a human typing while a goal runs does not make its rounds
 * any less stuck, so counts carry across rounds and across the human turns in between.
 */
export function* resetOnRearm(ctx: Context, reset: (agentId: string) => void) {
  yield ctx.on('goal/activation', (agent, activation: GoalActivation) => {
    if (activation === 'armed') reset(agent.id)
  })
  yield ctx.on('policy/settled', (agent) => reset(agent.id))
}
