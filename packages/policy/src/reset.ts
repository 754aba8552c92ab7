import type { Context } from 'cordis'
import type { GoalActivation } from '@goalkeeper/goal'
import { isRecordOf } from '@goalkeeper/session'

/**
 * The listeners that start a policy's count over for an agent, to be yielded inside the plugin's effect:
 * `yield* resetOnHumanInput(ctx, (agentId) => ...)`. They fire on
 * - real human input: every human message the loop admits is recorded as a `user/message`, and
 *   `session/event` runs listeners as the record is appended, before `agent/turn-start`;
 * - a goal armed by a human (create or resume), which sends no message: `/goal resume` after a pause must
 *   not hand the resumed rounds the streak that led to the pause;
 * - `policy/settled` from any policy: the streaks that led there are over, and a continue must not run
 *   into another plugin's stale count.
 */
export function* resetOnHumanInput(ctx: Context, reset: (agentId: string) => void) {
  yield ctx.on('session/event', (session, record) => {
    if (isRecordOf(record, 'user/message') && record.data.source?.kind === 'human') reset(session.id)
  })
  yield ctx.on('goal/activation', (agent, activation: GoalActivation) => {
    if (activation === 'armed') reset(agent.id)
  })
  yield ctx.on('policy/settled', (agent) => reset(agent.id))
}
