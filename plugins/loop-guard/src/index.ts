import type { Context } from 'cordis'
import { actOnVerdict, escalate, resetOnRearm, type PolicyBlockCode } from '@goalkeeper/policy'
import type { Agent, StepSummary } from '@goalkeeper/agent-loop'
import { Config, type LoopGuardConfig } from './config.ts'
import { LoopDetector } from './detector.ts'
import { blockText, escalationText, hintText, stopText } from './messages.ts'
import type { LoopFinding } from './types.ts'

export type { LoopGuardConfig } from './config.ts'
export type { LoopCall, LoopFinding, LoopKind } from './types.ts'
export { Config }

export const name = 'loop-guard'
export const inject = ['agents']

/** The code of the escalation, and of the goal block when loop-guard stops a goal round. */
export const STOP_CODE: PolicyBlockCode = 'repeated-tool-call'

export const apply = (ctx: Context, config: LoopGuardConfig) => {
  const logger = ctx.logger(name)
  const detectors = new Map<string, LoopDetector>()
  const inflight = new Set<Promise<void>>()
  const chars = config.argumentsPreviewChars
  let unloading = false

  const detectorOf = (agent: Agent) => {
    let detector = detectors.get(agent.id)
    if (!detector) detectors.set(agent.id, detector = new LoopDetector(config))
    return detector
  }

  async function onFinding(agent: Agent, detector: LoopDetector, finding: LoopFinding, turn: number) {
    const message = escalationText(finding, chars)
    const verdict = await escalate(ctx, agent, { source: name, code: STOP_CODE, message, turn }, config.escalationTimeoutMs)
    // However the wait ended, the streak that led here is settled: neither a continue nor the work that
    // follows a stop or a cancel may re-trigger at once.
    detector.reset()
    if (verdict === 'abandoned' || unloading) return
    actOnVerdict(ctx, agent, turn, verdict, {
      source: name, code: STOP_CODE, guidance: hintText(finding, chars),
      blockText: (reason) => blockText(finding, chars, reason), stopText: (reason) => stopText(finding, chars, reason),
    })
  }

  async function onStepEnd(agent: Agent, summary: StepSummary) {
    if (unloading || agent.disposed) return
    const detector = detectorOf(agent)
    const finding = detector.observe(summary.toolCalls)
    if (!finding) return
    if (finding.level === 'hard') return onFinding(agent, detector, finding, summary.turn)
    logger.info('hint for agent %s: %s', agent.id, escalationText(finding, chars))
    agent.steer({ content: hintText(finding, chars), source: { kind: 'plugin', name } })
  }

  const track = (work: Promise<void>) => {
    inflight.add(work)
    return work.finally(() => inflight.delete(work))
  }

  ctx.effect(function* () {
    yield ctx.on('agent/step-end', (agent, _turn, _step, summary) => track(onStepEnd(agent, summary)))
    yield* resetOnRearm(ctx, (agentId) => detectors.get(agentId)?.reset())
    yield ctx.on('agent/disposed', (agent) => detectors.delete(agent.id))
    // Runs first on unload (a pending verdict wait is abandoned with the plugin): let running handlers finish, drop all state.
    yield async () => {
      unloading = true
      await Promise.allSettled([...inflight])
      detectors.clear()
    }
  }, name)
}
