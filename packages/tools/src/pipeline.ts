import type { ToolCall } from '@goalkeeper/model'
import type { ToolCallContext, ToolDefinition, ToolResult } from './types.ts'
import { describeErrors, describeParameters, type Validator } from './schema.ts'
import { failure, fromThrown, normalizeResult } from './result.ts'

export interface Entry {
  tool: ToolDefinition
  /** The schema as registered (a private copy), also the key to remove it from the compiler. */
  parameters: Record<string, unknown>
  validate: Validator
}

const ABORTED = () => failure('ABORTED', 'The tool call was aborted before it finished.')

/** Parses and validates the raw arguments; a string result is the error for the model. */
function parseArguments(entry: Entry, raw: string): { args: unknown } | ToolResult {
  const name = entry.tool.name
  let args: unknown
  // Models send "" for tools without parameters.
  if (!raw || !raw.trim()) args = {}
  else {
    try {
      args = JSON.parse(raw)
    } catch (error) {
      return failure('INVALID_JSON', `The arguments of tool "${name}" are not valid JSON: ${(error as Error).message}. `
        + `Send exactly one JSON object (no comments, trailing commas or surrounding text) with these keys: ${describeParameters(entry.parameters)}.`)
    }
  }
  if (!args || typeof args !== 'object' || Array.isArray(args)) {
    const got = args === null ? 'null' : Array.isArray(args) ? 'an array' : typeof args
    return failure('INVALID_ARGUMENTS', `The arguments of tool "${name}" must be a JSON object, got ${got}. Expected keys: ${describeParameters(entry.parameters)}.`)
  }
  if (!entry.validate(args)) {
    const lines = describeErrors(entry.validate.errors).map((line) => `- ${line}`)
    return failure('INVALID_ARGUMENTS', `Invalid arguments for tool "${name}":\n${lines.join('\n')}\n`
      + `Expected: ${describeParameters(entry.parameters)}. Fix the arguments and call the tool again.`)
  }
  return { args }
}

/** Runs one call to completion; every failure becomes a result, and an abort wins over a slow tool. */
export async function runCall(entry: Entry, call: ToolCall, context: Omit<ToolCallContext, 'callId'>): Promise<ToolResult> {
  const { signal } = context
  if (signal.aborted) return ABORTED()
  const parsed = parseArguments(entry, call.arguments)
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
    return signal.aborted ? ABORTED() : fromThrown(thrown)
  } finally {
    signal.removeEventListener('abort', onAbort)
    // A tool that ignores the signal may still settle later; its outcome no longer matters.
    running.catch(() => {})
  }
}
