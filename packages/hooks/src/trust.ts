import { createHash } from 'node:crypto'
import { mkdir, readFile, realpath, rename, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describeError, isRecord, userConfigDir } from '@goalkeeper/kit'
import { HookSpec, type HookSpecConfig } from './config.ts'
import { parseEvent } from './events.ts'

/** Where approvals are kept, in the user's config dir: a place the workspace's model can not write. */
export const APPROVALS_FILE = 'hooks-approved.json'

/**
 * Whose hooks these are: `code` (a plugin started from a program, no file), `user` (a cordis.yml in the
 * user's config dir), `approved` (another file, whose hooks the user approved as they are now), or
 * `unapproved` (another file: its hooks do not run).
 */
export type TrustState = 'code' | 'user' | 'approved' | 'unapproved'

export interface Trust {
  state: TrustState
  /** The cordis.yml the hooks come from (absent for `code`). */
  file?: string
  /** The digest an approval must name. */
  digest: string
}

interface Approvals {
  version: 1
  /** By the real path of a cordis.yml: the digests of its hooks entries the user approved. */
  files: Record<string, string[]>
}

/**
 * A digest of a hooks entry's list as the plugin runs it (defaults filled, events in goalkeeper's spelling),
 * so a changed command, matcher or event needs a new approval while layout and comments do not.
 */
export function hooksDigest(hooks: readonly unknown[]): string {
  const normal = hooks.map((raw) => {
    const spec = HookSpec(raw as HookSpecConfig)
    return { event: parseEvent(spec.event), matcher: spec.matcher ?? null, command: spec.command, name: spec.name ?? null, timeout: spec.timeout, maxOutput: spec.maxOutput }
  })
  return `sha256:${createHash('sha256').update(JSON.stringify(normal)).digest('hex')}`
}

const approvalsPath = (env: NodeJS.ProcessEnv) => path.join(userConfigDir(env), APPROVALS_FILE)

async function realFile(file: string): Promise<string> {
  try {
    return await realpath(file)
  } catch {
    return path.resolve(file)
  }
}

async function readApprovals(env: NodeJS.ProcessEnv): Promise<Approvals> {
  let text: string
  try {
    text = await readFile(approvalsPath(env), 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, files: {} }
    throw new Error(`cannot read ${approvalsPath(env)}: ${describeError(error)}`)
  }
  const value: unknown = JSON.parse(text)
  if (!isRecord(value) || !isRecord(value.files)) throw new Error(`${approvalsPath(env)} is not an approvals file`)
  const files: Record<string, string[]> = {}
  for (const [file, digests] of Object.entries(value.files)) {
    if (Array.isArray(digests)) files[file] = digests.filter((d): d is string => typeof d === 'string')
  }
  return { version: 1, files }
}

/** Whose hooks these are, and so whether they may run. */
export async function trustOf(file: string | undefined, hooks: readonly unknown[], env: NodeJS.ProcessEnv = process.env): Promise<Trust> {
  const digest = hooksDigest(hooks)
  if (file === undefined) return { state: 'code', digest }
  const real = await realFile(file)
  const userDir = await realFile(userConfigDir(env))
  if (!path.relative(userDir, real).startsWith('..') && !path.isAbsolute(path.relative(userDir, real))) return { state: 'user', file: real, digest }
  const approvals = await readApprovals(env)
  return { state: approvals.files[real]?.includes(digest) ? 'approved' : 'unapproved', file: real, digest }
}

/**
 * Records that the user approves `digests` (the hooks entries of `file` as they are now), replacing what was
 * approved for that file before. Written whole through a temporary file, private to the user.
 */
export async function approveHooks(file: string, digests: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const approvals = await readApprovals(env)
  approvals.files[await realFile(file)] = [...new Set(digests)]
  const target = approvalsPath(env)
  await mkdir(path.dirname(target), { recursive: true, mode: 0o700 })
  const temporary = `${target}.${process.pid}.tmp`
  await writeFile(temporary, `${JSON.stringify(approvals, null, 2)}\n`, { mode: 0o600 })
  await rename(temporary, target)
  return target
}
