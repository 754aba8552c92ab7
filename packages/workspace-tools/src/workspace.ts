import path from 'node:path'
import type { CommandSandbox } from '@goalkeeper/sandbox'
import type { ToolCallContext } from '@goalkeeper/tools'
import { WorkspaceError } from './errors.ts'
import { realpathLoose, resolveInside, within, type Resolved } from './paths.ts'

export interface Limits {
  maxReadBytes: number
  maxOutputChars: number
  commandTimeoutMs: number
  maxCommandTimeoutMs: number
  maxSearchResults: number
  searchTimeoutMs: number
  maxListEntries: number
}

/** A resolved target plus the check the walkers apply to every directory entry below it. */
export interface Located extends Resolved {
  /** True for a real path at or below the session store, when the store lies inside this root. */
  isProtected(real: string): boolean
  /** Real paths of the session stores that lie inside this root. */
  stores: string[]
}

/** What every tool needs: the root of the calling agent and the limits. */
export interface Workspace {
  limits: Limits
  scrubSecrets: boolean
  resolve(call: ToolCallContext, input: string): Promise<Located>
  /** How a command of this call must run (the permission mode's answer; `none` without a permissions plugin). */
  commandSandbox(call: ToolCallContext): CommandSandbox
}

/**
/**
 * `storeDirs` and `commandSandbox` are asked at every call, because the sessions and permissions services
 * may be loaded, moved, changed or unloaded while the tools stay registered. `storeDirs` lists every
 * directory the sessions service reads sessions from.
 */
export function createWorkspace(
  root: string | undefined,
  limits: Limits,
  scrubSecrets: boolean,
  storeDirs: () => readonly string[] = () => [],
  commandSandbox: (call: ToolCallContext) => CommandSandbox = () => ({ kind: 'none' }),
): Workspace {
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
    resolve: async (call, input) => {
      const resolved = await resolveInside(rootOf(call), input)
      const stores: string[] = []
      for (const dir of storeDirs()) {
        const store = await storeInside(resolved.root, dir)
        if (store) stores.push(store)
      }
      const storeOf = (real: string) => stores.find((store) => within(real, store))
      const isProtected = (real: string) => storeOf(real) !== undefined
      const hit = storeOf(resolved.real)
      if (hit) throw protectedError(resolved, hit)
      return { ...resolved, isProtected, stores }
    },
    commandSandbox,
  }
}

/**
 * The real path of the session store if it lies inside the root. The session files are the source of
 * truth a resume trusts (goal state included), so a model writing into them could forge its own
 * authority; it must not read them either, since they hold whole conversations.
 */
async function storeInside(rootReal: string, dir: string | undefined): Promise<string | undefined> {
  if (!dir) return undefined
  const absolute = path.resolve(dir)
  // The store may not exist yet (created with the first session); an unresolvable one is compared as written.
  const real = await realpathLoose(absolute).catch(() => absolute)
  return within(real, rootReal) ? real : undefined
}

function protectedError(resolved: Resolved, store: string) {
  const where = path.relative(resolved.root, store) || '.'
  const subject = resolved.real === store ? `"${resolved.shown}"` : `"${resolved.shown}" is inside "${where}", which`
  return new WorkspaceError('PATH_PROTECTED', `${subject} holds goalkeeper's session logs, which tools cannot read or change. Work on other paths.`)
}

/** Throws the pipeline's ABORTED code between units of work (files, directories). */
export function checkAborted(call: ToolCallContext) {
  if (call.signal.aborted) throw new WorkspaceError('ABORTED', 'The tool call was aborted.')
}
