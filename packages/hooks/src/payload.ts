import path from 'node:path'
import type { ToolDefinition } from '@goalkeeper/tools'
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
