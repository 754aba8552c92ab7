import type { ToolCall } from '@goalkeeper/model'
import type { Entry, ToolCallContext, ToolResult } from './types.ts'
import type { ReviewOutcome } from './review.ts'
import { failure, fromThrown, normalizeResult } from './result.ts'
import { parseArguments } from './arguments.ts'

const ABORTED = () => failure('ABORTED', 'The tool call was aborted before it finished.')

/** The `tool/before-call` review of one validated call (the registry binds it to its context). */
export type Reviewer = (entry: Entry, args: Record<string, unknown>, call: ToolCallContext) => Promise<ReviewOutcome>

/** One call's result, and the arguments it ran with when it got that far. */
export interface CallOutcome {
  result: ToolResult
  args?: Readonly<Record<string, unknown>>
}

/** The result the model reads for a denied call; `denied` says who and why for the session. */
export function denial(by: string, reason: string): ToolResult {
  return { ...failure('DENIED', `The call was denied by ${by}: ${reason}`), denied: { by, reason } }
}

/**
 * Runs one call to completion: parse and validate, review (`tool/before-call`), execute. Every failure
 * becomes a result, and an abort wins over a slow listener or tool.
 */
export async function runCall(entry: Entry, call: ToolCall, context: Omit<ToolCallContext, 'callId'>, maxArgumentChars: number, review: Reviewer): Promise<CallOutcome> {
  const { signal } = context
  if (signal.aborted) return { result: ABORTED() }
  const parsed = parseArguments(entry, call.arguments, maxArgumentChars)
  if (!('args' in parsed)) return { result: parsed }

  const callContext = { ...context, callId: call.id }
  const reviewed = await review(entry, parsed.args as Record<string, unknown>, callContext)
  if (reviewed.kind === 'aborted') return { result: ABORTED() }
  const rewrites = reviewed.rewrites.length ? { rewrites: reviewed.rewrites } : {}
  if (reviewed.kind === 'deny') return { result: { ...denial(reviewed.denial.by, reviewed.denial.reason), ...rewrites } }
  // The tool gets its own unfrozen copy: it may change it without touching what the listeners agreed to.
  const result = await execute(entry, structuredClone(reviewed.args) as Record<string, unknown>, callContext)
  return { result: { ...result, ...rewrites }, args: reviewed.args }
}

async function execute(entry: Entry, args: Record<string, unknown>, context: ToolCallContext): Promise<ToolResult> {
  const { signal } = context
  if (signal.aborted) return ABORTED()
  const running = new Promise((resolve) => resolve(entry.tool.execute(args, context)))
  let onAbort!: () => void
  const abort = new Promise<'aborted'>((resolve) => {
    onAbort = () => resolve('aborted')
    signal.addEventListener('abort', onAbort, { once: true })
  })
  try {
    const value = await Promise.race([running, abort])
    if (value === 'aborted' || signal.aborted) return ABORTED()
    return normalizeResult(value)
      ?? failure('TOOL_FAILED', `Tool "${entry.tool.name}" returned an invalid result (expected a string or { ok, content }).`)
  } catch (thrown) {
    return signal.aborted ? ABORTED() : fromThrown(thrown, entry.tool.name)
  } finally {
    signal.removeEventListener('abort', onAbort)
    // A tool that ignores the signal may still settle later; its outcome no longer matters.
    running.catch(() => {})
  }
}
