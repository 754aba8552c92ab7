import { isDeepStrictEqual } from 'node:util'
import { describeError, dispatchIsolated } from '@goalkeeper/kit'
import type { UserMessage } from '@goalkeeper/session'
import type { PromptDecision, Submission } from './types.ts'
import type { AgentCore, PendingDecision } from './state.ts'

/** `input/rejected` reasons written by the loop itself (a `reject` decision writes its own reason). */
export const REJECT_DROPPED = 'dropped'
export const REJECT_ERROR = 'error'
export const rejectCancelled = (reason: string) => `cancel:${reason}`

/**
 * Runs the batch of `pending` through the `agent/prompt-submit` waterfall and records every message that does
 * not get in; `pending.batch` then holds the admitted messages in decision order. Does nothing once a cancel
 * or dispose abandoned the batch, before or during the decision.
 */
export async function submitBatch(agent: AgentCore, pending: PendingDecision): Promise<void> {
  if (pending.abandoned) return
  const { ctx } = agent.host
  const batch = pending.batch
  const submission: Submission = { messages: [...batch] }
  let decision: unknown
  let failure: unknown
  let threw = false
  try {
    decision = await ctx.waterfall('agent/prompt-submit', agent, submission,
      async () => ({ kind: 'submit', messages: [...submission.messages] }))
  } catch (error) {
    threw = true
    failure = error
  }
  if (pending.abandoned) return

  const checked = threw ? `a prompt-submit listener failed: ${describeError(failure)}` : checkDecision(decision, batch)
  // Settled first: a listener of the records below may cancel, and must find only the admitted messages left.
  pending.batch = typeof checked === 'string' || checked.kind === 'reject' ? [] : checked.messages
  if (typeof checked === 'string') {
    for (const message of batch) reject(agent, message, REJECT_ERROR)
    const code = threw ? 'PROMPT_SUBMIT_FAILED' : 'INVALID_DECISION'
    agent.host.logger.warn('%s: batch of %d rejected: %s', agent.id, batch.length, checked)
    dispatchIsolated(ctx, 'agent/error', agent, undefined, { code, message: checked, ...(threw ? { cause: failure } : {}) })
    return
  }
  const reason = checked.kind === 'reject' ? checked.reason : REJECT_DROPPED
  for (const message of batch) if (!pending.batch.includes(message)) reject(agent, message, reason)
}

/**
 * Runs `agent/admit` synchronously over the admitted messages of `pending` and returns those that pass (none
 * once a listener cancelled or disposed). The caller opens the turn in the same tick, so a check made here
 * (for example "is this still the legal next goal round?") cannot be overtaken by a mutation that lands
 * between the waterfall's end and the turn's records.
 */
export function vetoOnAdmit(agent: AgentCore, pending: PendingDecision): UserMessage[] {
  const { ctx } = agent.host
  for (const message of [...pending.batch]) {
    let verdict: unknown
    try {
      verdict = ctx.bail('agent/admit', agent, message)
    } catch (error) {
      verdict = `an agent/admit listener failed: ${describeError(error)}`
      agent.host.logger.warn('%s: message %s vetoed: %s', agent.id, message.id, verdict)
      dispatchIsolated(ctx, 'agent/error', agent, undefined, { code: 'ADMIT_FAILED', message: verdict as string, cause: error })
    }
    if (pending.abandoned) return []
    if (typeof verdict !== 'string' || !verdict) continue
    pending.batch = pending.batch.filter((other) => other !== message)
    reject(agent, message, verdict)
  }
  return pending.abandoned ? [] : pending.batch
}

export function reject(agent: AgentCore, message: UserMessage, reason: string) {
  agent.session.append('input/rejected', { messageId: message.id, reason })
}

/**
 * A decision may only select batch messages, unchanged: a listener must not be able to smuggle in a message
 * that was never queued, or rewrite one (for example its source, which carries authority).
 */
function checkDecision(decision: unknown, batch: UserMessage[]): PromptDecision | string {
  // Names the type only: a listener's stray value may hold prompt text, and this message is logged.
  if (!decision || typeof decision !== 'object') return `the decision is ${decision === null ? 'null' : typeof decision}, not a decision object`
  const { kind } = decision as PromptDecision
  if (kind === 'reject') {
    const reason = (decision as { reason?: unknown }).reason
    return { kind: 'reject', reason: typeof reason === 'string' && reason ? reason : 'rejected' }
  }
  if (kind !== 'submit') return `unknown decision kind ${JSON.stringify(kind)}`
  const messages = (decision as { messages?: unknown }).messages
  if (!Array.isArray(messages)) return 'a submit decision needs a messages array'
  const byId = new Map(batch.map((message) => [message.id, message]))
  const chosen: UserMessage[] = []
  for (const candidate of messages) {
    const original = byId.get(candidate?.id)
    if (!original) return `the decision names a message outside the batch (id ${JSON.stringify(candidate?.id)})`
    if (chosen.includes(original)) return `the decision names message ${original.id} twice`
    if (candidate !== original && !sameMessage(candidate, original)) return `the decision changed message ${original.id}`
    chosen.push(original)
  }
  return { kind: 'submit', messages: chosen }
}

/** Key order does not matter, so a listener may rebuild a message from its parts. */
function sameMessage(a: UserMessage, b: UserMessage) {
  return isDeepStrictEqual(a.content, b.content) && isDeepStrictEqual(a.source, b.source)
}
