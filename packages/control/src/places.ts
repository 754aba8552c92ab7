import os from 'node:os'
import path from 'node:path'

/** Overrides where processes meet their controllers; both sides must see the same value. */
export const CONTROL_DIR_VARIABLE = 'GOALKEEPER_CONTROL_DIR'

/**
 * Where a process serves its control socket and names the sessions it holds: a directory of this user's
 * only (0700) in the temp directory. Sandboxed commands get a /tmp of their own, so a model's command
 * cannot reach it; a Unix socket path must stay under 108 bytes, which a session store's path may not.
 */
export function controlDir(env: NodeJS.ProcessEnv = process.env): string {
  return env[CONTROL_DIR_VARIABLE] || path.join(os.tmpdir(), `goalkeeper-control-${process.getuid?.() ?? 'user'}`)
}

/** The file naming the process that holds a session live: `{ pid, socket }`. */
export const pointerFile = (dir: string, session: string) => path.join(dir, `${session}.json`)

export const socketFile = (dir: string, pid: number) => path.join(dir, `${pid}.sock`)
