import type { Context } from 'cordis'
import Schema from 'schemastery'
import type { Agent } from '@goalkeeper/agent-loop'
import type { GoalService } from '@goalkeeper/goal'
import type { SessionService } from '@goalkeeper/session'
import type { GitWorkspace } from './git.ts'
import type { FleetRecordData } from './records.ts'
import { CHECKPOINT_PART, recordedWorkspace } from './rewind.ts'

/** Where a goal's rounds are committed: its agent, its clone and the worker that runs it. */
export interface RoundCommitTarget {
  agent: Agent
  workspace: GitWorkspace
  worker: string
  /** Told the rounds and phase after each commit (what `queue` shows). */
  progress?: (progress: { rounds?: number; phase?: string }) => void
}

/**
 * Commits and pushes what the goal's rounds changed in the clone; once the push landed, the commit the
 * branch holds is recorded as `fleet/push` (when it moved or turns ran since the last record) and flushed
 * before anything else is reported.
 */
export async function commitRound(services: { sessions: SessionService; goals: GoalService }, target: RoundCommitTarget): Promise<void> {
  const { agent, workspace, worker } = target
  const goal = services.goals.get(agent)
  const round = goal?.roundsStarted ?? 0
  const commit = await workspace.save(`goalkeeper: round ${round} of session ${agent.id}`)
  // Recorded after every turn, a change or not: a worker taking over counts a turn after the last
  // recorded commit as lost (see rewind.ts), so a turn that changed nothing must be confirmed too.
  const recorded = recordedWorkspace(agent.session.records)
  if (commit && (commit !== recorded.commit || recorded.turnsAfter.length)) {
    const push: FleetRecordData['fleet/push'] = { worker, branch: workspace.branch, commit, round }
    agent.session.append('fleet/push', push)
  }
  await services.sessions.flush(agent.session)
  target.progress?.({ rounds: round, ...(goal ? { phase: goal.phase } : {}) })
}

export interface Config extends RoundCommitTarget {
  /** Told each failed commit; the rounds go on (the worker fails the job with the first at the end). */
  failed?: (error: unknown) => void
}

// The values are the live objects of one goal's run, handed in by the runner that plugs this entry.
export const Config: Schema<Config> = Schema.object({
  agent: Schema.any().required().description('The goal\'s agent (agent-loop\'s `Agent`): its rounds are committed.'),
  workspace: Schema.any().required().description('The clone the rounds change (a `GitWorkspace`), committed and pushed.'),
  worker: Schema.string().required().description('The worker named in `fleet/push`.'),
  progress: Schema.function().description('Told `{ rounds, phase }` after each commit.'),
  failed: Schema.function().description('Told each failed commit.'),
}) as Schema<Config>

export const name = 'fleet-round-commit'
export const inject = ['sessions', 'goals']

/**
 * Each round ends with the agent idle: its changes are committed and pushed then, and the next batch is
 * admitted only once that push is done. A worker that dies mid-round thus leaves a branch holding every
 * round its session records as done, and the worker taking over continues from there.
 */
export const apply = (ctx: Context, config: Config) => {
  let committing: Promise<void> = Promise.resolve()
  const queueCommit = () => {
    committing = committing.then(() => commitRound(ctx, config)).catch((error) => config.failed?.(error))
  }
  ctx.effect(function* () {
    // Unloaded, it leaves no commit running (teardown is last-in first-out: the listeners are gone by then).
    yield async () => await committing
    // A checkpoint carries the last recorded commit, so a worker that opens the session from it still rewinds.
    yield ctx.sessions.provideCheckpoint(CHECKPOINT_PART, (session) => (session === config.agent.session ? recordedWorkspace(session.records) : undefined))
    yield ctx.on('agent/status', (agent, status) => {
      if (agent === config.agent && status === 'idle') queueCommit()
    })
    yield ctx.on('agent/prompt-submit', async (agent, _submission, next) => {
      if (agent === config.agent) await committing
      return next()
    })
  }, 'fleet-round-commit')
}
