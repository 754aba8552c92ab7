import { execFile } from 'node:child_process'
import { accessSync, constants } from 'node:fs'
import path from 'node:path'
import { privilegeFlags } from './bwrap.ts'

/** Whether commands can be sandboxed here, and if not, why (in words a person can act on). */
export type SandboxStatus =
  | {
    available: true
    tool: 'bubblewrap'
    path: string
    version: string
    /** Verified in a trial sandbox: its CapEff was 0. A bwrap that leaves any capability is no sandbox. */
    capabilities: 'dropped'
    /** The uid a sandboxed command has (not 0 when goalkeeper runs as root). */
    uid: number
  }
  | { available: false; reason: string }

/**
 * The flags every sandboxed command gets, tried once: a bwrap that cannot make these namespaces is no
 * sandbox. The trial prints its own status, whose capabilities and uid are checked, not assumed.
 */
const trial = () => ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', ...privilegeFlags(), '--unshare-pid', '--unshare-net', '--die-with-parent', '--', '/bin/cat', '/proc/self/status']
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
  const tried = await run(file, trial())
  if (!tried.ok) {
    const why = tried.out.split('\n')[0] || 'it failed without a message'
    return { available: false, reason: `${file} cannot create the namespaces it needs here (${why}); a container may need --privileged or unprivileged user namespaces enabled, and bubblewrap 0.8 or later is needed` }
  }
  const status = parseStatus(tried.out)
  if (status.capEff === undefined || /[^0]/.test(status.capEff)) {
    return { available: false, reason: `${file} left capabilities to the sandboxed command (CapEff ${status.capEff ?? 'unknown'}), so a command of root could remount the file system writable` }
  }
  if (status.uid === undefined || (status.uid === 0 && process.getuid?.() === 0)) {
    return { available: false, reason: `${file} ran the sandboxed command as root (uid ${status.uid ?? 'unknown'}) although it was asked for another uid` }
  }
  const version = (await run(file, ['--version'])).out.replace(/^bubblewrap\s*/i, '') || 'unknown'
  return { available: true, tool: 'bubblewrap', path: file, version, capabilities: 'dropped', uid: status.uid }
}

/** The effective capabilities (hex) and the real uid from the text of /proc/self/status. */
export function parseStatus(text: string): { capEff?: string; uid?: number } {
  const capEff = /^CapEff:\s*([0-9a-f]+)$/m.exec(text)?.[1]
  const uid = /^Uid:\s*(\d+)/m.exec(text)?.[1]
  return { capEff, uid: uid === undefined ? undefined : Number(uid) }
}
