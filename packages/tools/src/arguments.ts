import type { Entry, ToolResult } from './types.ts'
import { describeErrors, describeParameters } from './schema.ts'
import { failure } from './result.ts'

/** Deeper than any real tool schema; a limit keeps recursive code in tools and policies off the stack limit. */
export const MAX_ARGUMENT_DEPTH = 64

const kindOf = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : typeof value)

/**
 * Why the parsed arguments are unsafe to hand to a tool, if they are: a `__proto__` key or a
 * `constructor.prototype` path lets a careless recursive merge in a tool write to Object.prototype.
 * Iterative, so the check itself cannot overflow the stack.
 */
export function findUnsafe(args: object): string | undefined {
  const stack: [unknown, string, number][] = [[args, '', 0]]
  while (stack.length) {
    const [node, at, depth] = stack.pop()!
    if (!node || typeof node !== 'object') continue
    if (depth >= MAX_ARGUMENT_DEPTH) return `the arguments nest deeper than ${MAX_ARGUMENT_DEPTH} levels (at ${at})`
    for (const key of Object.keys(node)) {
      const where = `${at}/${key}`
      if (key === '__proto__' || (key === 'prototype' && at.endsWith('/constructor'))) return `the key "${key}" is not allowed (at ${where})`
      stack.push([(node as Record<string, unknown>)[key], where, depth + 1])
    }
  }
}

/** Whether the parser failed at the very end of the text: the usual sign of output cut at the token limit. */
function endsAbruptly(message: string, raw: string): boolean {
  const at = /at position (\d+)/.exec(message)?.[1]
  return message.includes('end of JSON input') || Number(at) >= raw.trimEnd().length
}

/** Parses and validates the raw arguments; a `ToolResult` is the error for the model. */
export function parseArguments(entry: Entry, raw: unknown, maxChars: number): { args: unknown } | ToolResult {
  const name = entry.tool.name
  const expected = describeParameters(entry.parameters)
  if (raw !== undefined && raw !== null && typeof raw !== 'string') {
    return failure('INVALID_JSON', `The arguments of tool "${name}" did not arrive as JSON text (got ${kindOf(raw)}). Send one JSON object with these keys: ${expected}.`)
  }
  if (raw && raw.length > maxChars) {
    return failure('INVALID_ARGUMENTS', `The arguments of tool "${name}" are ${raw.length} characters long; the limit is ${maxChars}. Send smaller arguments.`)
  }
  let args: unknown
  // Models send "" for tools without parameters.
  if (!raw || !raw.trim()) args = {}
  else {
    try {
      args = JSON.parse(raw)
    } catch (error) {
      const message = (error as Error).message
      return failure('INVALID_JSON', `The arguments of tool "${name}" are not valid JSON: ${message}. `
        + (endsAbruptly(message, raw) ? 'The arguments end abruptly, as if the answer was cut off: send the call again, with shorter arguments if they were long. ' : '')
        + `Send exactly one JSON object (no comments, trailing commas or surrounding text) with these keys: ${expected}.`)
    }
  }
  if (!args || typeof args !== 'object' || Array.isArray(args)) {
    return failure('INVALID_ARGUMENTS', `The arguments of tool "${name}" must be a JSON object, got ${kindOf(args)}. Expected keys: ${expected}.`)
  }
  const unsafe = findUnsafe(args)
  if (unsafe) return failure('INVALID_ARGUMENTS', `Invalid arguments for tool "${name}": ${unsafe}. Expected keys: ${expected}.`)
  if (!entry.validate(args)) {
    const lines = describeErrors(entry.validate.errors).map((line) => `- ${line}`)
    return failure('INVALID_ARGUMENTS', `Invalid arguments for tool "${name}":\n${lines.join('\n')}\n`
      + `Expected: ${expected}. Fix the arguments and call the tool again.`)
  }
  return { args }
}
