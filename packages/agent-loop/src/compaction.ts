import { clip, describeError, dispatchIsolated } from '@goalkeeper/kit'
import { isRecordOf, type ContextCompactionData, type SessionRecord } from '@goalkeeper/session'
import type { ModelError, ModelMessage, ModelProvider, ModelRequest } from '@goalkeeper/model'
import type { AgentCore } from './state.ts'
import type { CompactionDecision, CompactionProposal, CompactionResult } from './types.ts'
import { applyCompaction, ELIDED_OUTPUT, type HistoryEntry } from './history.ts'
import { CHARS_PER_TOKEN, estimateFixed, estimateRequest, estimateText } from './estimate.ts'
import { readModelStream } from './stream.ts'
import { countRequest } from './count.ts'
import { messagesEstimate } from './request.ts'

/** The fixed instruction of the summary call (system prompt of that call; documented in the README). */
export const COMPACTION_INSTRUCTION = [
  'You write the working summary of a coding agent whose earlier conversation no longer fits its context window.',
  'The agent continues from your summary alone, with the workspace as it is now. Write plain text with these four parts:',
  '1. What was done: the steps taken and what they showed.',
  '2. Files touched: each path and what changed in it.',
  '3. Decisions: choices made and why, including approaches that failed and must not be repeated.',
  '4. What remains: the open work and the next concrete step.',
  'Keep exact paths, commands, identifiers and error messages. Write only what the transcript shows; do not call tools.',
].join('\n')

/** Heads the summary message, so the model knows what it reads. */
export const SUMMARY_HEADING = '[Summary of the earlier conversation, written when the history was compacted to fit the context window]'

/** How much of one message the summary call's transcript shows: the summary needs the gist, not every byte. */
const TRANSCRIPT_MESSAGE_CHARS = 4000
/** Below this a message says too little to summarise; the call is then too large and the fallback applies. */
const MIN_TRANSCRIPT_CHARS = 200

const removedMarker = (count: number) =>
  `[${count} earlier message${count === 1 ? ' was' : 's were'} removed to fit the context window; the workspace and the session log hold the full record.]`

export interface CompactionScope {
  agent: AgentCore
  turn: number
  step: number
  provider: ModelProvider
  signal: AbortSignal
}

/** Why a compaction is made: the request neared the window, the provider refused it as too long, or someone asked. */
export type CompactionReason = ContextCompactionData['reason']

export interface CompactionOptions {
  /** The provider's CONTEXT_OVERFLOW for `request`: evidence of the effective limit, whatever the configured window says. */
  refusal?: ModelError
  /** Skip the summary call and use the deterministic fallback (a second refusal: compact harder). */
  fallbackOnly?: boolean
}

/** Provider errors that end the turn even from the summary call: the next call would meet the same limit. */
const USAGE_LIMIT_CODES: ReadonlySet<string> = new Set(['RATE_LIMIT', 'QUOTA'])

type Plan = Omit<ContextCompactionData, 'turn' | 'step' | 'reason' | 'tokensBefore' | 'tokensAfter' | 'contextWindow'>

/**
 * Compacts the agent's history for `request`: when it passes the threshold (`threshold`), after the provider
 * refused it (`overflow`), or on demand (`request`). A summary written by the model, else the deterministic
 * fallback; the proposal goes through `agent/compact`, and an accepted one is recorded as `context/compacted`
 * and announced by `agent/compacted`. The caller re-reads the history after `compacted`.
 */
export async function compactHistory(scope: CompactionScope, request: ModelRequest, reason: CompactionReason, options: CompactionOptions = {}): Promise<CompactionResult> {
  const { agent } = scope
  const settings = agent.host.config.compaction
  if (!settings?.enabled) return { kind: 'unchanged', why: 'compaction is disabled' }
  if (scope.signal.aborted) return { kind: 'unchanged', why: 'aborted' }
  // Without a window (configured, reported or learned) a step's check ends here, before any estimate: nothing
  // would use it. A refusal or a request always estimates, and the kept per-message estimate makes that cheap.
  if (reason === 'threshold' && !windowFor(scope, request)) return { kind: 'unchanged', why: 'no context window is known' }
  const estimate = estimateFixed(request) + messagesEstimate(request, agent.history)
  if (options.refusal) learnLimit(agent, request, estimate, options.refusal)
  // On demand without a known window, the request as it is stands for one: the compaction halves it (target 0.5).
  const window = windowFor(scope, request) ?? (reason === 'request' ? estimate : undefined)
  if (!window) return { kind: 'unchanged', why: 'no context window is known' }
  // Near the threshold a provider that counts tokens exactly is asked; the estimate stays the fallback.
  const tokensBefore = reason === 'threshold' ? await countRequest(scope.provider, request, scope.signal, estimate, settings.threshold * window) : estimate
  if (reason === 'threshold' && tokensBefore <= settings.threshold * window) return { kind: 'unchanged', why: 'under the threshold' }

  let context = planContext(scope, request, window)
  let plan: Plan | undefined
  let fallbackReason: string | undefined
  if (options.fallbackOnly) fallbackReason = 'the request was refused again after a summary'
  else {
    const summarised = await summarise(scope, context)
    if (scope.signal.aborted) return { kind: 'unchanged', why: 'aborted' }
    if (summarised.kind === 'failed') return summarised
    if (summarised.kind === 'plan') plan = summarised.plan
    else {
      fallbackReason = summarised.why
      // A summary call refused as too long is evidence too: the fallback aims under it.
      const narrower = windowFor(scope, request)
      if (narrower && narrower < context.window) context = planContext(scope, request, narrower)
    }
  }
  plan ??= fallback(context)
  if (!plan) return { kind: 'unchanged', why: fallbackReason && !options.fallbackOnly ? `${fallbackReason}, and nothing is left to remove` : 'nothing is left to remove' }
  // A summary of little more than a summary saves nothing; recording it would only lose detail.
  if (after(context, plan) >= tokensBefore) return { kind: 'unchanged', why: 'the history would get no shorter' }

  const proposal: CompactionProposal = {
    turn: scope.turn, step: scope.step, reason, method: plan.method, summary: plan.summary, replaced: plan.replaced,
    tokensBefore, tokensAfter: after(context, plan), contextWindow: context.window,
  }
  const decision = await decide(scope, proposal)
  if (scope.signal.aborted) return { kind: 'unchanged', why: 'aborted' }
  if (decision.kind === 'veto') return { kind: 'unchanged', why: `vetoed: ${decision.reason}` }
  if (decision.summary !== plan.summary) plan = { ...plan, method: 'policy', summary: decision.summary }
  const data: ContextCompactionData = {
    turn: scope.turn, step: scope.step, reason, method: plan.method, uptoSeq: plan.uptoSeq, keptSeqs: plan.keptSeqs,
    summary: plan.summary, elided: plan.elided, replaced: plan.replaced, tokensBefore, tokensAfter: after(context, plan),
    contextWindow: context.window,
    ...(plan.usage ? { usage: plan.usage } : {}),
    ...(fallbackReason && plan.method === 'fallback' ? { fallbackReason } : {}),
  }
  agent.session.append('context/compacted', data)
  agent.checkpointWanted = true
  agent.host.logger.info('%s: history compacted (%s, %s): about %d -> %d tokens of %d', agent.id, reason, data.method, tokensBefore, data.tokensAfter, context.window)
  dispatchIsolated(agent.host.ctx, 'agent/compacted', agent, data)
  return { kind: 'compacted', data }
}

/** The window compaction aims under: the provider's (or the config's), narrowed by what refusals taught. */
function windowFor(scope: CompactionScope, request: ModelRequest): number | undefined {
  const configured = scope.provider.contextWindow?.(request.model) ?? scope.agent.host.config.compaction?.contextWindow
  const learned = scope.agent.contextLimits.get(limitKey(scope.agent, request))
  return configured && learned ? Math.min(configured, learned) : configured ?? learned
}

const limitKey = (agent: AgentCore, request: ModelRequest) => `${agent.model}\u0000${request.model ?? ''}`

/**
 * Learns the effective limit, in the loop's estimated tokens, from a refusal of a request estimated at
 * `estimate`: the server's stated limit scaled by how its count of this request compares with the estimate,
 * else its limit when under the estimate, else the estimate itself (the refused size is over the limit,
 * whatever the server or the configuration says). Kept for the agent's lifetime, per provider and model.
 */
function learnLimit(agent: AgentCore, request: ModelRequest, estimate: number, refusal: ModelError) {
  const { contextLimit, requestTokens } = refusal
  let limit = estimate
  if (contextLimit && requestTokens) limit = Math.min(limit, Math.floor(contextLimit * estimate / requestTokens))
  else if (contextLimit) limit = Math.min(limit, contextLimit)
  const key = limitKey(agent, request)
  const known = agent.contextLimits.get(key)
  agent.contextLimits.set(key, Math.max(1, known ? Math.min(known, limit) : limit))
}

function planContext(scope: CompactionScope, request: ModelRequest, window: number): PlanContext {
  const settings = scope.agent.host.config.compaction
  return {
    entries: scope.agent.history.entries(),
    cost: (message) => scope.agent.history.cost(message),
    fixed: estimateFixed(request),
    target: Math.floor(settings.target * window),
    pinned: openingSeqs(scope.agent.session.records, scope.turn),
    window,
    threshold: settings.threshold,
    summaryMax: Math.max(64, Math.min(settings.summaryMaxTokens, Math.floor(window / 4))),
    ...(request.model ? { model: request.model } : {}),
  }
}

interface PlanContext {
  entries: HistoryEntry[]
  /** A message's estimate, kept by the history: plans weigh the same messages many times. */
  cost: (message: ModelMessage) => number
  fixed: number
  target: number
  pinned: Set<number>
  window: number
  threshold: number
  summaryMax: number
  model?: string
}

type Summarised = { kind: 'plan'; plan: Plan } | { kind: 'none'; why: string } | { kind: 'failed'; error: ModelError }

/** The model summarises everything before the recent exchanges that fit the target, pinned prompts excepted. */
async function summarise(scope: CompactionScope, context: PlanContext): Promise<Summarised> {
  const { entries, pinned, fixed, target, summaryMax } = context
  const pinnedTokens = entries.filter((entry) => pinned.has(entry.seq)).reduce((sum, entry) => sum + context.cost(entry.message), 0)
  const cut = chooseCut(entries, target - fixed - pinnedTokens - summaryMax, context.cost)
  const replaced = entries.slice(0, cut).filter((entry) => !pinned.has(entry.seq))
  if (!replaced.length) return { kind: 'none', why: 'nothing before the recent exchanges to summarise' }
  // The summary call must fit the window with its answer: long messages are clipped evenly to make room.
  const room = (context.threshold * context.window - summaryMax - estimateText(COMPACTION_INSTRUCTION)) * CHARS_PER_TOKEN
  const each = Math.max(MIN_TRANSCRIPT_CHARS, Math.min(TRANSCRIPT_MESSAGE_CHARS, Math.floor(room / (replaced.length + pinned.size + 1))))
  const task = entries.filter((entry) => pinned.has(entry.seq)).map((entry) => render(entry.message, each))
  const request: ModelRequest = {
    system: COMPACTION_INSTRUCTION,
    messages: [{
      role: 'user',
      content: [{ type: 'text', text: [
        ...(task.length ? ['The task the agent is working on:', ...task, ''] : []),
        'The conversation to summarise:',
        ...replaced.map((entry) => render(entry.message, each)),
        '',
        'Write the summary now.',
      ].join('\n') }],
    }],
    tools: [],
    maxTokens: summaryMax,
    ...(context.model ? { model: context.model } : {}),
  }
  if (estimateRequest(request) > context.threshold * context.window) return { kind: 'none', why: 'the part to summarise does not fit the context window' }
  const reply = await readModelStream(scope.provider, request, scope.signal, {})
  if (reply.aborted) return { kind: 'none', why: 'aborted' }
  if (reply.error && USAGE_LIMIT_CODES.has(String(reply.error.code))) return { kind: 'failed', error: reply.error }
  // Refused as too long itself: never a compaction of the compaction; its size narrows the window for the fallback.
  if (reply.error?.code === 'CONTEXT_OVERFLOW') learnLimit(scope.agent, request, estimateRequest(request), reply.error)
  if (reply.error) return { kind: 'none', why: `the summary call failed: ${reply.error.code}: ${reply.error.message}` }
  const text = reply.text.trim()
  if (!text) return { kind: 'none', why: 'the summary call returned no text' }
  if (estimateText(text) > summaryMax) return { kind: 'none', why: `the summary is too large (about ${estimateText(text)} tokens, at most ${summaryMax})` }
  const uptoSeq = replaced.at(-1)!.seq
  const plan: Plan = {
    method: 'summary', uptoSeq, keptSeqs: keptBefore(entries, pinned, uptoSeq), summary: `${SUMMARY_HEADING}\n${text}`,
    elided: [], replaced: replaced.length, ...(reply.usage ? { usage: reply.usage } : {}),
  }
  // Recent exchanges too large on their own still lose their oldest tool outputs.
  return { kind: 'plan', plan: elide(context, plan) }
}

/** The deterministic fallback: the oldest tool outputs go first, then the oldest exchanges, with a marker. */
function fallback(context: PlanContext): Plan | undefined {
  const { entries, pinned } = context
  let plan: Plan = elide(context, { method: 'fallback', uptoSeq: -1, keptSeqs: [], summary: '', elided: [], replaced: 0 })
  for (const cut of boundaries(entries)) {
    if (after(context, plan) <= context.target) break
    const replaced = entries.slice(0, cut).filter((entry) => !pinned.has(entry.seq))
    if (!replaced.length) continue
    const uptoSeq = replaced.at(-1)!.seq
    plan = { ...plan, uptoSeq, keptSeqs: keptBefore(entries, pinned, uptoSeq), summary: removedMarker(replaced.length), replaced: replaced.length }
  }
  return plan.replaced || plan.elided.length ? plan : undefined
}

/** Adds tool outputs to `plan.elided`, oldest first, until the request fits the target. */
function elide(context: PlanContext, plan: Plan): Plan {
  const elided = [...plan.elided]
  const remaining = applyCompaction(context.entries, plan)
  for (const entry of remaining) {
    if (after(context, { ...plan, elided }) <= context.target) break
    if (entry.message.role === 'tool' && entry.message.content !== ELIDED_OUTPUT) elided.push(entry.seq)
  }
  return { ...plan, elided }
}

/** Estimated tokens of the request once `plan` is applied. */
const after = (context: PlanContext, plan: Plan): number =>
  context.fixed + applyCompaction(context.entries, plan).reduce((sum, entry) => sum + context.cost(entry.message), 0)

/**
 * Where the recent exchanges kept verbatim start: the earliest exchange start whose tail fits `budget`,
 * and at least the last exchange. An exchange starts at a user or assistant message, so a tool result
 * never loses the call it answers.
 */
function chooseCut(entries: readonly HistoryEntry[], budget: number, cost: (message: ModelMessage) => number): number {
  const starts = boundaries(entries)
  if (!starts.length) return 0
  let cut = starts.at(-1)!
  let tail = 0
  for (let index = entries.length - 1; index >= 0; index--) {
    tail += cost(entries[index].message)
    if (tail > budget) break
    if (starts.includes(index)) cut = index
  }
  return cut
}

/** Indices that start an exchange (not the first entry: cutting there replaces nothing). */
const boundaries = (entries: readonly HistoryEntry[]): number[] =>
  entries.flatMap((entry, index) => (index > 0 && entry.message.role !== 'tool' ? [index] : []))

const keptBefore = (entries: readonly HistoryEntry[], pinned: Set<number>, uptoSeq: number) =>
  entries.filter((entry) => entry.seq <= uptoSeq && pinned.has(entry.seq)).map((entry) => entry.seq)

/**
 * The prompts that opened the current turn (a goal round's prompt holds its objective): they stay verbatim,
 * so the model never loses what it is working on.
 */
function openingSeqs(records: readonly SessionRecord[], turn: number): Set<number> {
  const seqs = new Set<number>()
  const start = records.findLastIndex((record) => isRecordOf(record, 'turn/start') && record.data.turn === turn)
  if (start < 0) return seqs
  for (let index = start + 1; index < records.length; index++) {
    const record = records[index]
    if (isRecordOf(record, 'step/start')) break
    if (isRecordOf(record, 'user/message')) seqs.add(record.seq)
  }
  return seqs
}

/** One message as a line of the transcript the summary call reads. */
function render(message: ModelMessage, max: number): string {
  switch (message.role) {
    case 'user':
      return `USER: ${clip(message.content.map((block) => block.text).join('\n'), max)}`
    case 'assistant': {
      const calls = message.toolCalls.map((call) => `\n  -> ${call.name}(${clip(call.arguments, Math.min(400, max))})`).join('')
      return `ASSISTANT: ${clip(message.text, max)}${calls}`
    }
    case 'tool':
      return `TOOL ${message.name} (${message.ok ? 'ok' : 'failed'}): ${clip(message.content, max)}`
    default:
      return ''
  }
}

/** The `agent/compact` waterfall: a listener may veto or replace the summary. A throwing listener keeps the proposal. */
async function decide(scope: CompactionScope, proposal: CompactionProposal): Promise<CompactionDecision> {
  const { ctx, logger } = scope.agent.host
  const proposed = proposal.summary
  try {
    const decision = await ctx.waterfall('agent/compact', scope.agent, proposal,
      async (): Promise<CompactionDecision> => ({ kind: 'accept', summary: proposal.summary }))
    if (decision?.kind === 'veto') return { kind: 'veto', reason: String(decision.reason ?? '') }
    if (decision?.kind === 'accept' && typeof decision.summary === 'string') return decision
    throw new TypeError(`not a compaction decision: ${JSON.stringify(decision)}`)
  } catch (error) {
    logger.warn('%s: an agent/compact listener failed, the compaction goes ahead as proposed: %s', scope.agent.id, describeError(error))
    dispatchIsolated(ctx, 'agent/error', scope.agent, scope.turn, { code: 'COMPACT_HOOK_FAILED', message: describeError(error), cause: error })
    return { kind: 'accept', summary: proposed }
  }
}
