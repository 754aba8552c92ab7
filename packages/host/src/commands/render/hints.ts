import path from 'node:path'
import type { GlobalOptions } from '../../command.ts'
import { programName } from '../../invocation.ts'

// Captured when the command modules load, before `--cwd` changes the process's directory: hints are
// meant to be pasted into the shell the person ran goalkeeper from.
const launchDir = process.cwd()

function quote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`
}

/**
 * A goalkeeper command line that repeats the global options that matter (`--cwd`, `--config`), so a hint
 * works when pasted as is: `goalkeeper --cwd demo goal --session ID`.
 */
export function cliCommand(globals: Pick<GlobalOptions, 'cwd' | 'config' | 'configSource'>, ...words: string[]): string {
  const parts = [programName()]
  if (path.resolve(globals.cwd) !== launchDir) parts.push('--cwd', quote(shorter(launchDir, globals.cwd)))
  // --config is read relative to --cwd, so it is given relative to that directory (or absolute).
  // The built-in composition is found again without being named.
  const implicit = globals.configSource === 'built-in' || globals.config === path.join(globals.cwd, 'cordis.yml')
  if (!implicit) parts.push('--config', quote(shorter(globals.cwd, globals.config)))
  return [...parts, ...words.map(quote)].join(' ')
}

/**
 * `target` relative to `base` when it lies below `base`, else absolute: a path that climbs out with `..`
 * reads differently depending on where the repository happens to be checked out.
 */
function shorter(base: string, target: string): string {
  const relative = path.relative(base, target)
  return relative && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : path.resolve(base, target)
}
