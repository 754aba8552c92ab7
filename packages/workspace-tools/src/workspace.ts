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

/** What the sessions service guards (`ctx.sessions.protectedPaths`): its key files and every store. */
export interface Guarded {
  keyFiles: readonly string[]
  stores: readonly string[]
}

/** A resolved target plus the check the walkers apply to every directory entry below it. */
export interface Located extends Resolved {
  /** What a real path at or below a guarded place holds, in the words of a listing; undefined for any other path. */
  isProtected(real: string): string | undefined
  /** Real paths of the session stores that lie inside this root. */
  stores: string[]
  /** Real paths of the key files, wherever they are (a sandboxed command can read outside the root). */
  keyFiles: string[]
  /** Real paths of the key files' directories, wherever they are, except one that holds the root: it is hidden whole. */
  keyDirs: string[]
}

/** What every tool needs: the root of the calling agent and the limits. */
export interface Workspace {
  limits: Limits
  scrubSecrets: boolean
  resolve(call: ToolCallContext, input: string): Promise<Located>
  /** How a command of this call must run (the permission mode's answer; `none` without a permissions plugin). */
  commandSandbox(call: ToolCallContext): CommandSandbox
}

const LOGS = 'goalkeeper\'s session logs'
const KEY = 'goalkeeper\'s session signing key'

/**
 * `guarded` and `commandSandbox` are asked at every call, because the sessions and permissions services
 * may be loaded, moved, changed or unloaded while the tools stay registered.
 */
export function createWorkspace(
  root: string | undefined,
  limits: Limits,
  scrubSecrets: boolean,
  guarded: () => Guarded = () => ({ keyFiles: [], stores: [] }),
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
      const { keyFiles: keys, stores: storeDirs } = guarded()
      const stores: string[] = []
      for (const dir of storeDirs) {
        const store = await storeInside(resolved.root, dir)
        if (store) stores.push(store)
      }
      const keyFiles = await Promise.all(keys.map(realOrAsWritten))
      // A key's directory that holds the whole workspace (a key file kept in it, or in the home directory
      // above it) cannot be hidden without hiding the workspace: then the file alone is.
      const keyDirs = [...new Set(keyFiles.map((file) => path.dirname(file)))].filter((dir) => !within(resolved.root, dir))
      const isProtected = (real: string) => {
        if (keyFiles.includes(real) || keyDirs.some((dir) => within(real, dir))) return KEY
        return stores.some((store) => within(real, store)) ? LOGS : undefined
      }
      const what = isProtected(resolved.real)
      if (what) throw protectedError(resolved, what, [...keyDirs, ...keyFiles, ...stores].find((place) => within(resolved.real, place))!)
      return { ...resolved, isProtected, stores, keyFiles, keyDirs }
    },
    commandSandbox,
  }
}

/** The real path of `place`, or the path as written when it does not exist yet (a store made with the first session). */
const realOrAsWritten = async (place: string) => {
  const absolute = path.resolve(place)
  return realpathLoose(absolute).catch(() => absolute)
}

/**
 * The real path of the session store if it lies inside the root. The session files are the source of
 * truth a resume trusts (goal state included), so a model writing into them could forge its own
 * authority; it must not read them either, since they hold whole conversations. The key signs every
 * person's input a session holds: whoever reads it can forge one, in any workspace.
 */
async function storeInside(rootReal: string, dir: string | undefined): Promise<string | undefined> {
  if (!dir) return undefined
  const real = await realOrAsWritten(dir)
  return within(real, rootReal) ? real : undefined
}

function protectedError(resolved: Resolved, what: string, place: string) {
  const where = path.relative(resolved.root, place) || '.'
  const subject = resolved.real === place ? `"${resolved.shown}"` : `"${resolved.shown}" is inside "${where}", which`
  return new WorkspaceError('PATH_PROTECTED', `${subject} holds ${what}, which tools cannot read or change. Work on other paths.`)
}

/** Throws the pipeline's ABORTED code between units of work (files, directories). */
export function checkAborted(call: ToolCallContext) {
  if (call.signal.aborted) throw new WorkspaceError('ABORTED', 'The tool call was aborted.')
}
