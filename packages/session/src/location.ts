import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'

/** Where sessions were kept inside each workspace before they moved to the state directory. */
export const LEGACY_DIR = path.join('.goalkeeper', 'sessions')

/** `$XDG_STATE_HOME` (an absolute path), else `~/.local/state`, as the XDG base directory spec says. */
export function stateHome(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env.XDG_STATE_HOME
  return configured && path.isAbsolute(configured) ? configured : path.join(os.homedir(), '.local', 'state')
}

/**
 * A directory name per workspace: readable (the folder's name) and unique (a hash of its absolute
 * path), so two checkouts called `app` never share sessions.
 */
export function workspaceKey(workspace: string): string {
  const absolute = path.resolve(workspace)
  const name = path.basename(absolute).replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^[._-]+/, '').slice(0, 40) || 'root'
  return `${name}-${createHash('sha256').update(absolute).digest('hex').slice(0, 16)}`
}

/** Where every workspace's default sessions directory lies: `$XDG_STATE_HOME/goalkeeper/sessions`. */
export function sessionsRoot(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(stateHome(env), 'goalkeeper', 'sessions')
}

/** The default sessions directory of a workspace: `$XDG_STATE_HOME/goalkeeper/sessions/<workspace-key>`. */
export function defaultSessionsDir(workspace: string, env: NodeJS.ProcessEnv = process.env): string {
  return path.join(sessionsRoot(env), workspaceKey(workspace))
}

/**
 * The project a directory belongs to: the nearest directory at or above it that holds `.git` (a directory,
 * or the file of a worktree or submodule), else the directory itself. Sessions are kept per project, so
 * a command started in any subdirectory finds them.
 */
export function projectRoot(dir: string): string {
  const start = path.resolve(dir)
  for (let place = start; ; place = path.dirname(place)) {
    if (existsSync(path.join(place, '.git'))) return place
    if (path.dirname(place) === place) return start
  }
}
