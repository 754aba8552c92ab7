import path from 'node:path'
import type { ToolCallContext } from '@goalkeeper/tools'
import { WorkspaceError } from './errors.ts'
import { resolveInside, type Resolved } from './paths.ts'

export interface Limits {
  maxReadBytes: number
  maxOutputChars: number
  commandTimeoutMs: number
  maxCommandTimeoutMs: number
  maxSearchResults: number
  searchTimeoutMs: number
  maxListEntries: number
}

/** What every tool needs: the root of the calling agent and the limits. */
export interface Workspace {
  limits: Limits
  scrubSecrets: boolean
  resolve(call: ToolCallContext, input: string): Promise<Resolved>
}

export function createWorkspace(root: string | undefined, limits: Limits, scrubSecrets: boolean): Workspace {
  // A configured root is fixed at load time; otherwise each agent works in its own session cwd.
  const fixed = root ? path.resolve(process.cwd(), root) : undefined
  const rootOf = (call: ToolCallContext) => {
    if (fixed) return fixed
    if (!call.cwd) throw new WorkspaceError('ROOT_NOT_FOUND', 'No workspace root: the agent has no cwd and workspace-tools has no `root` configured.')
    return path.resolve(process.cwd(), call.cwd)
  }
  return {
    limits,
    scrubSecrets,
    resolve: (call, input) => resolveInside(rootOf(call), input),
  }
}

/** Throws the pipeline's ABORTED code between units of work (files, directories). */
export function checkAborted(call: ToolCallContext) {
  if (call.signal.aborted) throw new WorkspaceError('ABORTED', 'The tool call was aborted.')
}
