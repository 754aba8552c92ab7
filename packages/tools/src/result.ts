import type { ToolResult } from './types.ts'

export const failure = (code: string, message: string): ToolResult => ({ ok: false, content: message, error: { code, message } })

const isObject = (value: unknown): value is Record<string, unknown> => !!value && typeof value === 'object'

/** Turns whatever a tool returned into a `ToolResult`, or undefined if it is not a string or `{ ok, content }`. */
export function normalizeResult(value: unknown): ToolResult | undefined {
  if (typeof value === 'string') return { ok: true, content: value }
  if (!isObject(value) || typeof value.ok !== 'boolean' || typeof value.content !== 'string') return
  if (value.ok) return { ok: true, content: value.content }
  const error = value.error
  if (isObject(error) && typeof error.code === 'string' && typeof error.message === 'string') {
    return { ok: false, content: value.content, error: { code: error.code, message: error.message } }
  }
  return failure('TOOL_FAILED', value.content || 'the tool reported a failure without a message')
}

/** The error's own string `code` (e.g. PATH_OUTSIDE_ROOT, ENOENT) when it has one. */
export function fromThrown(thrown: unknown): ToolResult {
  const code = isObject(thrown) && typeof thrown.code === 'string' && thrown.code ? thrown.code : 'TOOL_FAILED'
  const message = thrown instanceof Error ? thrown.message : isObject(thrown) && typeof thrown.message === 'string' ? thrown.message : String(thrown)
  return failure(code, message || `the tool failed (${code})`)
}

/** Caps content at `max` characters (never splitting a surrogate pair) and says so. */
export function capContent(result: ToolResult, max: number): ToolResult {
  const { content } = result
  if (content.length <= max) return result
  let end = max
  const last = content.charCodeAt(end - 1)
  if (last >= 0xd800 && last <= 0xdbff) end -= 1
  const note = `\n\n[output truncated: the result had ${content.length} characters; only the first ${end} are shown]`
  return { ...result, content: content.slice(0, end) + note }
}
