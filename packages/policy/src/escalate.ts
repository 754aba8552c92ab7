import type { Context } from 'cordis'
import { describeError } from '@goalkeeper/kit'
import type { Agent } from '@goalkeeper/agent-loop'
import type { PolicyEscalation, PolicyVerdict } from './types.ts'
import { awaitVerdict, isVerdict } from './verdict.ts'

/**
 * Emits `policy/escalate` and waits up to `timeoutMs` for a verdict. Resolves with the verdict, with
 * undefined for "stop on your own" (nobody answered, a listener failed or answered garbage, or the time ran
 * out; each but the first is logged as a warning), or with 'abandoned' when the turn was cancelled, the
 * agent disposed or the plugin unloaded meanwhile: then nobody is left to act on an answer.
 */
export async function escalate(ctx: Context, agent: Agent, escalation: PolicyEscalation, timeoutMs: number): Promise<PolicyVerdict | undefined | 'abandoned'> {
  const logger = ctx.logger(escalation.source)
  logger.info('escalating for agent %s: %s', agent.id, escalation.message)
  const outcome = await awaitVerdict(ctx, 'policy/escalate', [agent, escalation], { timeoutMs, agent }).outcome
  if (outcome === 'abandoned') return outcome
  if (outcome === 'timeout') {
    logger.warn('no policy/escalate verdict within %d ms; stopping', timeoutMs)
  } else if ('error' in outcome) {
    logger.warn('a policy/escalate listener failed; stopping: %s', describeError(outcome.error))
  } else if (outcome.value == null || isVerdict(outcome.value)) {
    return outcome.value ?? undefined
  } else {
    logger.warn('ignoring a malformed policy/escalate verdict: %o', outcome.value)
  }
}
