import type { Context } from 'cordis'
import { actOnVerdict, escalate, policyRuntime, toolMatcher, type PolicyBlockCode } from '@goalkeeper/policy'
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
  const chars = config.argumentsPreviewChars
  const writes = toolMatcher(ctx, { names: config.writeTools, kinds: config.writeKinds })

  async function onFinding(agent: Agent, detector: LoopDetector, finding: LoopFinding, turn: number) {
    const message = escalationText(finding, chars)
    const verdict = await escalate(ctx, agent, { source: name, code: STOP_CODE, message, turn }, config.escalationTimeoutMs)
    // However the wait ended, the streak that led here is settled: neither a continue nor the work that
    // follows a stop or a cancel may re-trigger at once.
    detector.reset()
    if (verdict === 'abandoned' || runtime.unloading) return
    actOnVerdict(ctx, agent, turn, verdict, {
      source: name, code: STOP_CODE, guidance: hintText(finding, chars),
      blockText: (reason) => blockText(finding, chars, reason), stopText: (reason) => stopText(finding, chars, reason),
    })
  }

  const runtime = policyRuntime(ctx, name, {
    create: () => new LoopDetector(config, writes),
    reset: (detector) => detector.reset(),
    async onStepEnd(agent: Agent, summary: StepSummary, detector: LoopDetector) {
      const finding = detector.observe(summary.toolCalls)
      if (!finding) return
      if (finding.level === 'hard') return onFinding(agent, detector, finding, summary.turn)
      logger.info('hint for agent %s: %s', agent.id, escalationText(finding, chars))
      agent.steer({ content: hintText(finding, chars), source: { kind: 'plugin', name } })
    },
  })
}
