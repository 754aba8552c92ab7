import path from 'node:path'
import type { ToolCallContent, ToolCallLocation, ToolCallStatus, ToolKind } from '@agentclientprotocol/sdk'
import { clip, isRecord } from '@goalkeeper/kit'

/** What a client shows for one tool call: a title, an icon kind and the files it touches. */
export interface ToolCallView {
  title: string
  kind: ToolKind
  locations: ToolCallLocation[]
  rawInput: unknown
}

/** Longest tool output sent as display text; the session log keeps all of it. */
export const MAX_SHOWN_OUTPUT = 20_000

const KINDS: Record<string, ToolKind> = {
  read_file: 'read',
  list_dir: 'read',
  search: 'search',
  write_file: 'edit',
  edit_file: 'edit',
  run_command: 'execute',
  get_goal: 'other',
  create_goal: 'other',
  update_goal: 'other',
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

const str = (value: unknown) => (typeof value === 'string' ? value : undefined)

function title(name: string, args: Record<string, unknown>): string {
  const file = str(args.path)
  switch (name) {
    case 'read_file': {
      const range = args.start_line || args.end_line ? ` (lines ${args.start_line ?? 1}-${args.end_line ?? 'end'})` : ''
      return `Read ${file}${range}`
    }
    case 'write_file': return `Write ${file}`
    case 'edit_file': return `Edit ${file}`
    case 'list_dir': return `List ${file ?? '.'}`
    case 'search': return `Search ${JSON.stringify(str(args.pattern) ?? '')}${file ? ` in ${file}` : ''}`
    case 'run_command': return `Run ${clip(str(args.command) ?? '', 120)}`
    case 'get_goal': return 'Read the goal'
    case 'create_goal': return `Create goal ${JSON.stringify(clip(str(args.objective) ?? '', 80))}`
    case 'update_goal': return `Goal: ${str(args.action) ?? 'update'}`
    default: return `${name} ${clip(JSON.stringify(args), 120)}`
  }
}

/** An absolute path for a path argument, so a client can follow along; undefined for anything else. */
function absolute(cwd: string, file: unknown): string | undefined {
  if (typeof file !== 'string' || !file || file.includes('\0')) return undefined
  return path.resolve(cwd, file)
}

export function viewToolCall(name: string, argumentsText: string, cwd: string): ToolCallView {
  const args = parseArguments(argumentsText)
  if (typeof args === 'string') return { title: `${name} (arguments that are not a JSON object)`, kind: KINDS[name] ?? 'other', locations: [], rawInput: args }
  const where = name === 'search' || name === 'list_dir' ? absolute(cwd, args.path ?? '.') : absolute(cwd, args.path)
  const line = typeof args.start_line === 'number' ? args.start_line : undefined
  return {
    title: title(name, args),
    kind: KINDS[name] ?? 'other',
    locations: where && (name in KINDS) ? [{ path: where, ...(line ? { line } : {}) }] : [],
    rawInput: args,
  }
}

export interface ToolOutcome {
  ok: boolean
  content: string
  error?: { code: string; message: string }
}

const text = (value: string): ToolCallContent => ({ type: 'content', content: { type: 'text', text: value } })

/** How a finished call is shown: its status, the output (or error) as text, and a diff for file edits. */
export function viewToolResult(name: string, argumentsText: string, result: ToolOutcome, cwd: string): { status: ToolCallStatus; content: ToolCallContent[]; rawOutput: unknown } {
  const args = parseArguments(argumentsText)
  const content: ToolCallContent[] = []
  const file = typeof args === 'object' ? absolute(cwd, args.path) : undefined
  if (result.ok && file && typeof args === 'object') {
    // The edit tools say what they did; a diff lets an editor show the change in place.
    if (name === 'edit_file' && typeof args.old_string === 'string' && typeof args.new_string === 'string') {
      content.push({ type: 'diff', path: file, oldText: args.old_string, newText: args.new_string })
    } else if (name === 'write_file' && typeof args.content === 'string' && result.content.startsWith('Created ')) {
      content.push({ type: 'diff', path: file, oldText: null, newText: args.content })
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
