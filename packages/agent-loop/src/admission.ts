import { dispatchIsolated } from '@goalkeeper/session'
import type { UserMessage } from '@goalkeeper/session'
import type { PromptDecision, Submission } from './types.ts'
import type { LoopAgent } from './agent.ts'
import { describe } from './errors.ts'

/** `input/rejected` reasons written by the loop itself (a `reject` decision writes its own reason). */
export const REJECT_DROPPED = 'dropped'
export const REJECT_ERROR = 'error'
export const rejectCancelled = (reason: string) => `cancel:${reason}`

/**
 * Runs one batch through the `agent/prompt-submit` waterfall and records every message that does not get
 * in. Returns the admitted messages in decision order (empty: no turn opens).
 */
export async function admitBatch(agent: LoopAgent, batch: UserMessage[]): Promise<UserMessage[]> {
  const { ctx } = agent.host
  const pending = agent.decide(batch)
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
  agent.decided(pending)
  if (pending.void) return []

  const checked = threw ? `a prompt-submit listener failed: ${describe(failure)}` : checkDecision(decision, batch)
  if (typeof checked === 'string') {
    for (const message of batch) reject(agent, message, REJECT_ERROR)
    const code = threw ? 'PROMPT_SUBMIT_FAILED' : 'INVALID_DECISION'
    agent.host.logger.warn('%s: batch of %d rejected: %s', agent.id, batch.length, checked)
    dispatchIsolated(ctx, 'agent/error', agent, undefined, { code, message: checked, ...(threw ? { cause: failure } : {}) })
    return []
  }
  if (checked.kind === 'reject') {
    for (const message of batch) reject(agent, message, checked.reason)
    return []
  }
  const admitted = new Set(checked.messages)
  for (const message of batch) if (!admitted.has(message)) reject(agent, message, REJECT_DROPPED)
  return checked.messages
}

/**
 * Runs `agent/admit` synchronously over the admitted messages. The caller opens the turn in the same tick, so
 * a check made here (for example "is this still the legal next goal round?") cannot be overtaken by a
 * mutation that lands between the waterfall's end and the turn's records.
 */
export function lastWord(agent: LoopAgent, admitted: UserMessage[]): UserMessage[] {
  const { ctx } = agent.host
  return admitted.filter((message) => {
    let verdict: unknown
    try {
      verdict = ctx.bail('agent/admit', agent, message)
    } catch (error) {
      verdict = `an agent/admit listener failed: ${describe(error)}`
      agent.host.logger.warn('%s: message %s vetoed: %s', agent.id, message.id, verdict)
      dispatchIsolated(ctx, 'agent/error', agent, undefined, { code: 'ADMIT_FAILED', message: verdict as string, cause: error })
    }
    if (typeof verdict !== 'string' || !verdict) return true
    reject(agent, message, verdict)
    return false
  })
}

export function reject(agent: LoopAgent, message: UserMessage, reason: string) {
  agent.session.append('input/rejected', { messageId: message.id, reason })
}

/**
 * A decision may only select batch messages, unchanged: a listener must not be able to smuggle in a message
 * that was never queued, or rewrite one (for example its source, which carries authority).
 */
function checkDecision(decision: unknown, batch: UserMessage[]): PromptDecision | string {
  if (!decision || typeof decision !== 'object') return `the decision is not an object: ${JSON.stringify(decision)}`
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

function sameMessage(a: UserMessage, b: UserMessage) {
  return sameValue(a.content, b.content) && sameValue(a.source, b.source)
}

/** Structural equality of JSON-like values, independent of key order. */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (!a || !b || typeof a !== 'object' || typeof b !== 'object' || Array.isArray(a) !== Array.isArray(b)) return false
  const keys = Object.keys(a)
  if (keys.length !== Object.keys(b).length) return false
  return keys.every((key) => sameValue((a as any)[key], (b as any)[key]))
}
