import type { ToolCall } from '@goalkeeper/model'
import type { Entry, ToolCallContext, ToolResult } from './types.ts'
import { failure, fromThrown, normalizeResult } from './result.ts'
import { parseArguments } from './arguments.ts'

const ABORTED = () => failure('ABORTED', 'The tool call was aborted before it finished.')

/** Runs one call to completion; every failure becomes a result, and an abort wins over a slow tool. */
export async function runCall(entry: Entry, call: ToolCall, context: Omit<ToolCallContext, 'callId'>, maxArgumentChars: number): Promise<ToolResult> {
  const { signal } = context
  if (signal.aborted) return ABORTED()
  const parsed = parseArguments(entry, call.arguments, maxArgumentChars)
  if (!('args' in parsed)) return parsed

  const running = new Promise((resolve) => resolve(entry.tool.execute(parsed.args, { ...context, callId: call.id })))
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
