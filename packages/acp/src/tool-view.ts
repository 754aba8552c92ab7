import path from 'node:path'
import type { ToolCallContent, ToolCallLocation, ToolCallStatus, ToolKind } from '@agentclientprotocol/sdk'
import { clip, isRecord } from '@goalkeeper/kit'
import type { ToolDefinition, ToolKind as OwnKind } from '@goalkeeper/tools'

/** What a client shows for one tool call: a title, an icon kind and the files it touches. */
export interface ToolCallView {
  title: string
  kind: ToolKind
  locations: ToolCallLocation[]
  rawInput: unknown
}

/** Longest tool output sent as display text; the session log keeps all of it. */
export const MAX_SHOWN_OUTPUT = 20_000

/** ACP has no kind for tools that work on the session itself: they show as `other`. */
const KINDS: Record<OwnKind, ToolKind> = {
  read: 'read',
  search: 'search',
  edit: 'edit',
  execute: 'execute',
  session: 'other',
  other: 'other',
}

const kindOf = (tool: ToolDefinition | undefined): ToolKind => (tool?.kind && Object.hasOwn(KINDS, tool.kind) ? KINDS[tool.kind] : 'other')

/** A tool's own describer, run defensively: it is a plugin's code, and the arguments may not have validated. */
function described<T>(describe: (() => T) | undefined): T | undefined {
  if (!describe) return undefined
  try {
    return describe()
  } catch {
    return undefined
  }
}

/** The call's arguments as the model wrote them, parsed; the raw text when they are not a JSON object. */
export function parseArguments(text: string): Record<string, unknown> | string {
  try {
    const value = JSON.parse(text)
    return isRecord(value) ? value : text
  } catch {
    return text
  }
}

/** An absolute path for a path a tool named, so a client can follow along; undefined for anything else. */
function absolute(cwd: string, file: unknown): string | undefined {
  if (typeof file !== 'string' || !file || file.includes('\0')) return undefined
  return path.resolve(cwd, file)
}

function locationsOf(tool: ToolDefinition | undefined, args: Record<string, unknown>, cwd: string): ToolCallLocation[] {
  const named = described(tool?.locations && (() => tool.locations!(args)))
  if (!Array.isArray(named)) return []
  return named.flatMap((location) => {
    const where = absolute(cwd, location?.path)
    if (!where) return []
    const line = Number.isInteger(location.line) && location.line! > 0 ? location.line : undefined
    return [{ path: where, ...(line ? { line } : {}) }]
  })
}

/**
 * What a client shows for a call, from what its tool says of itself (`tool`, when it is registered): the
 * kind, the title and the files it touches. A tool that says nothing is `other`, titled by its name and arguments.
 */
export function viewToolCall(name: string, argumentsText: string, cwd: string, tool?: ToolDefinition): ToolCallView {
  const args = parseArguments(argumentsText)
  const kind = kindOf(tool)
  if (typeof args === 'string') return { title: `${name} (arguments that are not a JSON object)`, kind, locations: [], rawInput: args }
  const title = described(tool?.title && (() => tool.title!(args)))
  return {
    title: typeof title === 'string' && title ? title : `${name} ${clip(JSON.stringify(args), 120)}`,
    kind,
    locations: locationsOf(tool, args, cwd),
    rawInput: args,
  }
}

export interface ToolOutcome {
  ok: boolean
  content: string
  error?: { code: string; message: string }
}

const text = (value: string): ToolCallContent => ({ type: 'content', content: { type: 'text', text: value } })

/** How a finished call is shown: its status, the output (or error) as text, and a diff when the tool tells one. */
export function viewToolResult(name: string, argumentsText: string, result: ToolOutcome, cwd: string, tool?: ToolDefinition): { status: ToolCallStatus; content: ToolCallContent[]; rawOutput: unknown } {
  const args = parseArguments(argumentsText)
  const content: ToolCallContent[] = []
  if (result.ok && typeof args === 'object') {
    // An editor shows the change in place.
    const diff = described(tool?.diff && (() => tool.diff!(args, { ok: result.ok, content: result.content })))
    const file = absolute(cwd, diff?.path)
    if (diff && file && typeof diff.newText === 'string' && (diff.oldText === null || typeof diff.oldText === 'string')) {
      content.push({ type: 'diff', path: file, oldText: diff.oldText, newText: diff.newText })
    }
  }
  const shown = result.ok ? result.content : result.content || (result.error ? `${result.error.code}: ${result.error.message}` : '')
  if (shown) content.push(text(shown.length > MAX_SHOWN_OUTPUT ? `${clip(shown, MAX_SHOWN_OUTPUT)}\n[${shown.length} characters; the session log has all of them]` : shown))
  return {
    status: result.ok ? 'completed' : 'failed',
    content,
    rawOutput: { ok: result.ok, ...(result.error ? { error: result.error } : {}) },
  }
}
