import os from 'node:os'
import path from 'node:path'

/**
 * goalkeeper's user-level directory: `$XDG_CONFIG_HOME/goalkeeper`, or `~/.config/goalkeeper` when the
 * variable is unset or not absolute (the XDG Base Directory rule). It holds the user's cordis.yml and AGENTS.md.
 */
export function userConfigDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CONFIG_HOME
  const base = xdg && path.isAbsolute(xdg) ? xdg : path.join(env.HOME || os.homedir(), '.config')
  return path.join(base, 'goalkeeper')
}
