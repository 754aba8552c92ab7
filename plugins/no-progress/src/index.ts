import type { Context } from 'cordis'
import { dispatchIsolated } from '@goalkeeper/kit'
import { actOnVerdict, escalate, policyRuntime, stopEndedRound, toolMatcher, type PolicyBlockCode } from '@goalkeeper/policy'
import type { Agent, StepSummary } from '@goalkeeper/agent-loop'
import type { TurnOutcome } from '@goalkeeper/session'
import type {} from '@goalkeeper/goal'
import { Config, type NoProgressConfig } from './config.ts'
import { blockText, escalationText, hintText, kindWords, stopText } from './messages.ts'
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
  const isProgress = toolMatcher(ctx, { names: config.progressTools, kinds: config.progressKinds, changing: true })
  const isRead = toolMatcher(ctx, { names: config.readTools, kinds: config.readKinds })
  // What the messages name: the kinds in words, then any tool named in the configuration.
  const tools = kindWords(config.progressKinds, config.progressTools)
  const reads = kindWords(config.readKinds, config.readTools)

  async function onStop(agent: Agent, tracker: IdleTracker, finding: IdleFinding, turn: number, ended = false) {
    const message = escalationText(finding, tools, reads)
    const verdict = await escalate(ctx, agent, { source: name, code: STOP_CODE, message, turn }, config.escalationTimeoutMs)
    tracker.reset()
    if (verdict === 'abandoned' || runtime.unloading) return
    if (ended) {
      // The round is over: a continue has no turn to steer into (the hint rides in the next round's system prompt).
      if (verdict?.action === 'continue') return void dispatchIsolated(ctx, 'policy/settled', agent, { source: name, turn, action: 'continue' })
      stopEndedRound(ctx, agent, turn, { source: name, code: STOP_CODE, blockText: blockText(finding, tools, reads, verdict?.reason) })
      return
    }
    actOnVerdict(ctx, agent, turn, verdict, {
      source: name, code: STOP_CODE, guidance: hintText(finding, tools, config.rounds, reads),
      blockText: (reason) => blockText(finding, tools, reads, reason), stopText: (reason) => stopText(finding, tools, reads, reason),
    })
  }

  /** A goal round that ended at the agent loop's step limit (`MAX_STEPS`) is judged like one that stopped talking. */
  function onTurnEnd(agent: Agent, turn: number, outcome: TurnOutcome) {
    if (runtime.unloading || agent.disposed || outcome?.kind !== 'error' || outcome.code !== 'MAX_STEPS') return
    const tracker = runtime.get(agent.id)
    const finding = tracker?.observeStepLimit(turn, () => ctx.get('goals')?.roundOf(agent, turn)?.round)
    if (!tracker || !finding) return
    if (finding.level === 'stop') return void runtime.track(onStop(agent, tracker, finding, turn, true))
    logger.info('hint for agent %s from its next goal round on: %s', agent.id, escalationText(finding, tools))
  }

  /**
   * The hint rides in the system prompt of the next goal round rather than in a steered message: a message
   * steered at the end of a round would earn that round one more model call, the very thing being saved.
   */
  function addHint(agent: Agent, parts: string[]) {
    const finding = runtime.get(agent.id)?.pending()
    if (!finding || agent.turn === undefined || !ctx.get('goals')?.roundOf(agent, agent.turn)) return
    parts.push(hintText(finding, tools, config.rounds, reads))
  }

  const runtime = policyRuntime(ctx, name, {
    create: () => new IdleTracker(config, isProgress, isRead),
    reset: (tracker) => tracker.reset(),
    async onStepEnd(agent: Agent, summary: StepSummary, tracker: IdleTracker) {
      // The goal plugin is optional (Cordis 4 has no optional inject): without it no turn is a goal round.
      const finding = tracker.observe(summary, () => ctx.get('goals')?.roundOf(agent, summary.turn)?.round)
      if (!finding) return
      if (finding.level === 'stop') return onStop(agent, tracker, finding, summary.turn)
      logger.info('hint for agent %s from its next goal round on: %s', agent.id, escalationText(finding, tools, reads))
    },
    *listeners() {
      yield ctx.on('agent/system-prompt', addHint)
      yield ctx.on('agent/turn-end', onTurnEnd)
    },
  })
}
