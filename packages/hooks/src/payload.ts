import path from 'node:path'
import type { ToolDefinition } from '@goalkeeper/tools'
import { HOOK_EVENTS, type HookEvent } from './events.ts'
import type { MatchTarget } from './matcher.ts'

/**
 * `tool_input` as a hook reads it: the call's arguments, plus Claude Code's `file_path` (absolute) beside a
 * workspace tool's `path`, so scripts written for its Edit, Write and Read tools find the file.
 */
export function toolInput(args: Readonly<Record<string, unknown>>, cwd: string): Record<string, unknown> {
  const input: Record<string, unknown> = { ...args }
  if (typeof args.path === 'string' && !('file_path' in args)) input.file_path = path.resolve(cwd, args.path)
  return input
}

/**
 * The arguments an `updatedInput` stands for: the `file_path` added by `toolInput` is taken back out (a
 * changed one becomes the new `path`), unless the tool itself has such a parameter.
 */
export function fromToolInput(updated: Record<string, unknown>, original: Readonly<Record<string, unknown>>, tool: ToolDefinition, cwd: string): Record<string, unknown> {
  const properties = (tool.parameters as { properties?: Record<string, unknown> }).properties ?? {}
  if ('file_path' in properties || !('file_path' in updated)) return updated
  const { file_path: filePath, ...rest } = updated
  const given = typeof original.path === 'string' ? path.resolve(cwd, original.path) : undefined
  if (typeof filePath === 'string' && filePath !== given && rest.path === original.path) rest.path = path.relative(cwd, path.resolve(cwd, filePath)) || '.'
  return rest
}

/** The kind a tool declares, when tools declare one. */
export function kindOf(tool: ToolDefinition | undefined): string | undefined {
  const kind = (tool as { kind?: unknown } | undefined)?.kind
  return typeof kind === 'string' ? kind : undefined
}

/** What a tool event matches on. */
export function toolTarget(name: string, tool: ToolDefinition | undefined, args: Readonly<Record<string, unknown>> | undefined): MatchTarget {
  return {
    tool: name,
    kind: kindOf(tool),
    command: typeof args?.command === 'string' ? args.command : undefined,
    path: typeof args?.path === 'string' ? args.path : undefined,
  }
}

/** Where an event happened, as its stdin tells it. */
export interface InputScope {
  session?: { id: string; file: string }
  cwd: string
  permissionMode?: string
  turn?: number
  step?: number
}

/**
 * The JSON a hook reads on stdin: Claude Code's common fields (`session_id`, `transcript_path`, `cwd`,
 * `hook_event_name`, `permission_mode`), the event's own, and goalkeeper's under `goalkeeper`.
 */
export function hookInput(event: HookEvent, scope: InputScope, fields: Record<string, unknown>): string {
  return JSON.stringify({
    session_id: scope.session?.id ?? null,
    transcript_path: scope.session?.file ?? null,
    cwd: scope.cwd,
    hook_event_name: HOOK_EVENTS[event],
    ...(scope.permissionMode ? { permission_mode: scope.permissionMode } : {}),
    ...fields,
    goalkeeper: {
      event,
      ...(scope.turn !== undefined ? { turn: scope.turn } : {}),
      ...(scope.step !== undefined ? { step: scope.step } : {}),
    },
  })
}

/** The environment of a hook: the user's, plus the workspace under both projects' names. */
export function hookEnv(event: HookEvent, cwd: string): NodeJS.ProcessEnv {
  return { ...process.env, GOALKEEPER_PROJECT_DIR: cwd, CLAUDE_PROJECT_DIR: cwd, GOALKEEPER_HOOK_EVENT: event }
}
