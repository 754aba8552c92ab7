import { execFile } from 'node:child_process'
import { accessSync, constants } from 'node:fs'
import path from 'node:path'

/** Whether commands can be sandboxed here, and if not, why (in words a person can act on). */
export type SandboxStatus =
  | { available: true; tool: 'bubblewrap'; path: string; version: string }
  | { available: false; reason: string }

/** The flags every sandboxed command gets, tried once: a bwrap that cannot make these namespaces is no sandbox. */
const TRIAL = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--unshare-pid', '--unshare-net', '--die-with-parent', '--', '/bin/true']
const INSTALL_HINT = 'install the Debian/Ubuntu package bubblewrap (apt-get install bubblewrap)'

function findExecutable(name: string): string | undefined {
  const candidates = name.includes('/') ? [path.resolve(name)] : (process.env.PATH ?? '').split(':').filter(Boolean).map((dir) => path.join(dir, name))
  return candidates.find((candidate) => {
    try {
      accessSync(candidate, constants.X_OK)
      return true
    } catch {
      return false
    }
  })
}

function run(file: string, args: string[]): Promise<{ ok: boolean; out: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: 10_000, encoding: 'utf8' }, (error, stdout, stderr) => resolve({ ok: !error, out: `${stdout}${stderr}`.trim() }))
  })
}

const cache = new Map<string, Promise<SandboxStatus>>()

/**
 * Finds `bwrap` (a name looked up in PATH, or a path) and runs a trial command with the namespaces a
 * sandboxed command needs. Answered once per executable and process: a container either lets bwrap create
 * namespaces or it does not, and asking costs a process start.
 */
export function probeSandbox(bwrap = 'bwrap'): Promise<SandboxStatus> {
  let status = cache.get(bwrap)
  if (!status) cache.set(bwrap, (status = probe(bwrap)))
  return status
}

async function probe(bwrap: string): Promise<SandboxStatus> {
  if (process.platform !== 'linux') return { available: false, reason: `the bubblewrap sandbox exists on Linux only (this is ${process.platform})` }
  const file = findExecutable(bwrap)
  if (!file) return { available: false, reason: `${bwrap} was not found; ${INSTALL_HINT}` }
  const trial = await run(file, TRIAL)
  if (!trial.ok) {
    const why = trial.out.split('\n')[0] || 'it failed without a message'
    return { available: false, reason: `${file} cannot create the namespaces it needs here (${why}); a container may need --privileged or unprivileged user namespaces enabled` }
  }
  const version = (await run(file, ['--version'])).out.replace(/^bubblewrap\s*/i, '') || 'unknown'
  return { available: true, tool: 'bubblewrap', path: file, version }
}
