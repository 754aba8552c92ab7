import { clip, isRecord } from '@goalkeeper/kit'
import type { ToolResult } from './types.ts'

export const failure = (code: string, message: string): ToolResult => ({ ok: false, content: message, error: { code, message } })

/** Turns whatever a tool returned into a `ToolResult`, or undefined if it is not a string or `{ ok, content }`. */
export function normalizeResult(value: unknown): ToolResult | undefined {
  if (typeof value === 'string') return { ok: true, content: value }
  if (!isRecord(value) || typeof value.ok !== 'boolean' || typeof value.content !== 'string') return
  if (value.ok) return { ok: true, content: value.content }
  const error = value.error
  if (isRecord(error) && typeof error.code === 'string' && typeof error.message === 'string') {
    return { ok: false, content: value.content, error: { code: error.code, message: error.message } }
  }
  return failure('TOOL_FAILED', value.content || 'the tool reported a failure without a message')
}

/** The error's own string `code` (e.g. PATH_OUTSIDE_ROOT, ENOENT) when it has one. */
export function fromThrown(thrown: unknown, tool: string): ToolResult {
  let code: string
  let message: string
  try {
    code = isRecord(thrown) && typeof thrown.code === 'string' && thrown.code ? thrown.code : 'TOOL_FAILED'
    message = thrown instanceof Error ? thrown.message : isRecord(thrown) && typeof thrown.message === 'string' ? thrown.message : String(thrown)
  } catch {
    // A null-prototype object or a Proxy that throws on access: nothing readable, but still a result.
    return failure('TOOL_FAILED', `Tool "${tool}" failed with a value that is not an Error.`)
  }
  return failure(code, message || `the tool failed (${code})`)
}

const MAX_CODE_CHARS = 64

/** Cuts `text` at `max` characters (never splitting a surrogate pair) and says so. */
function cap(text: string, max: number): string {
  if (text.length <= max) return text
  const shown = clip(text, max, '')
  return `${shown}\n\n[output truncated: the result had ${text.length} characters; only the first ${shown.length} are shown]`
}

/** Caps content and error message at `max` characters and the code at 64: all three reach the session and the model. */
export function capResult(result: ToolResult, max: number): ToolResult {
  const content = cap(result.content, max)
  if (!result.error) return content === result.content ? result : { ...result, content }
  const error = { code: result.error.code.slice(0, MAX_CODE_CHARS), message: cap(result.error.message, max) }
  return { ...result, content, error }
}
