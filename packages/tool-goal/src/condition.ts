import type { Context } from 'cordis'
import type { Agent } from '@goalkeeper/agent-loop'
import type { GoalRoundEnded } from '@goalkeeper/goal'
import type { ToolCallContext } from '@goalkeeper/tools'
import { describeError } from '@goalkeeper/kit'
import { judgeCompletion, judgedTurns, verifyCompletion, type ToolGoalConfig } from './tools.ts'

/**
 * After a round of a condition goal (`until`), whether or not the model called complete: the checks run
 * first, then the judge; the goal completes when both agree. A "not met" is recorded with the goal and the
 * next round's prompt carries its reasons. Without a judge loaded nothing is decided here: the model's own
 * completion (checked and judged as usual) is then the only way the goal completes.
 */
export async function reviewCondition(ctx: Context, config: ToolGoalConfig, agent: Agent, ended: GoalRoundEnded): Promise<void> {
  const live = ctx.goals.get(agent)
  if (!ctx.get('goalJudge') || !live?.until || live.id !== ended.goalId || live.revision !== ended.revision || live.phase !== 'active') return
  // The model claimed completion in this round and the judge already refused it: one ruling per round.
  if (judgedTurns.get(agent) === ended.turn) return
  const call: ToolCallContext = {
    agent,
    turn: ended.turn,
    step: 0,
    callId: `goal-round-${ended.round}.condition`,
    signal: ended.signal,
    turnSources: [{ kind: 'goal', goalId: ended.goalId, revision: ended.revision, round: ended.round }],
    cwd: agent.session.header.cwd,
  }
  const checked = live.verify?.length ? await verifyCompletion(ctx, call, live, config.checkTimeoutMs) : { runs: [] }
  if ('ok' in checked) return
  const refused = await judgeCompletion(ctx, call, checked.runs, false)
  if (refused) return
  const now = ctx.goals.get(agent)
  // The goal may have moved while the checks and the judge ran: a person's change wins.
  if (now?.id !== live.id || now.revision !== live.revision || now.phase !== 'active') return
  try {
    ctx.goals.complete(agent, { id: now.id, revision: now.revision })
  } catch (error) {
    ctx.logger('tool-goal').warn('agent %s: the goal met its condition but could not be completed: %s', agent.id, describeError(error))
  }
}
