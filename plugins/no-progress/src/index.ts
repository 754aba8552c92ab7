import type { Context } from 'cordis'
import { actOnVerdict, escalate, resetOnRearm, wildcard, type PolicyBlockCode } from '@goalkeeper/policy'
import type { Agent, StepSummary } from '@goalkeeper/agent-loop'
import type {} from '@goalkeeper/goal'
import { Config, type NoProgressConfig } from './config.ts'
import { blockText, escalationText, hintText, stopText } from './messages.ts'
import { IdleTracker } from './tracker.ts'
import type { IdleFinding } from './types.ts'

export type { NoProgressConfig } from './config.ts'
export type { IdleFinding, IdleKind, IdleRound } from './types.ts'
export { Config }

export const name = 'no-progress'
export const inject = ['agents']

/** The code of the escalation, and of the goal block when no-progress stops a goal round. */
export const STOP_CODE: PolicyBlockCode = 'no-progress'

export const apply = (ctx: Context, config: NoProgressConfig) => {
  const logger = ctx.logger(name)
  const trackers = new Map<string, IdleTracker>()
  const inflight = new Set<Promise<void>>()
  const isProgress = wildcard(config.progressTools)
  const tools = config.progressTools
  let unloading = false

  const trackerOf = (agent: Agent) => {
    let tracker = trackers.get(agent.id)
    if (!tracker) trackers.set(agent.id, tracker = new IdleTracker(config, isProgress))
    return tracker
  }

  async function onStop(agent: Agent, tracker: IdleTracker, finding: IdleFinding, turn: number) {
    const message = escalationText(finding, tools)
    const verdict = await escalate(ctx, agent, { source: name, code: STOP_CODE, message, turn }, config.escalationTimeoutMs)
    tracker.reset()
    if (verdict === 'abandoned' || unloading) return
    actOnVerdict(ctx, agent, turn, verdict, {
      source: name, code: STOP_CODE, guidance: hintText(finding, tools, config.rounds),
      blockText: (reason) => blockText(finding, tools, reason), stopText: (reason) => stopText(finding, tools, reason),
    })
  }

  async function onStepEnd(agent: Agent, summary: StepSummary) {
    if (unloading || agent.disposed) return
    const tracker = trackerOf(agent)
    // The goal plugin is optional (Cordis 4 has no optional inject): without it no turn is a goal round.
    const finding = tracker.observe(summary, () => ctx.get('goals')?.roundOf(agent, summary.turn)?.round)
    if (!finding) return
    if (finding.level === 'stop') return onStop(agent, tracker, finding, summary.turn)
    logger.info('hint for agent %s from its next goal round on: %s', agent.id, escalationText(finding, tools))
  }

  /**
   * The hint rides in the system prompt of the next goal round rather than in a steered message: a message
   * steered at the end of a round would earn that round one more model call, the very thing being saved.
   */
  function addHint(agent: Agent, parts: string[]) {
    const finding = trackers.get(agent.id)?.pending()
    if (!finding || agent.turn === undefined || !ctx.get('goals')?.roundOf(agent, agent.turn)) return
    parts.push(hintText(finding, tools, config.rounds))
  }

  const track = (work: Promise<void>) => {
    inflight.add(work)
    return work.finally(() => inflight.delete(work))
  }

  ctx.effect(function* () {
    yield ctx.on('agent/step-end', (agent, _turn, _step, summary) => track(onStepEnd(agent, summary)))
    yield ctx.on('agent/system-prompt', addHint)
    yield* resetOnRearm(ctx, (agentId) => trackers.get(agentId)?.reset())
    yield ctx.on('agent/disposed', (agent) => trackers.delete(agent.id))
    // Runs first on unload (a pending verdict wait is abandoned with the plugin): let running handlers finish, drop all state.
    yield async () => {
      unloading = true
      await Promise.allSettled([...inflight])
      trackers.clear()
    }
  }, name)
}
