import path from 'node:path'
import { projectRoot, type SessionService, type SessionSummary, type SummaryFold } from '@goalkeeper/session'
import type { GlobalOptions } from '../../command.ts'
import { asHostError, HostError } from '../../errors.ts'
import { cliCommand } from '../render/hints.ts'

/**
 * The full id of a saved session from what a person typed: the whole id, or an unambiguous part of its
 * start or end (`20261129-2114` or the random `k3v9qa` tail).
 */
export async function resolveSessionId(sessions: SessionService, text: string, globals: Pick<GlobalOptions, 'cwd' | 'config'>): Promise<string> {
  const wanted = text.trim()
  const list = `\`${cliCommand(globals, 'sessions')}\` lists them`
  if (!wanted) throw new HostError('the session id is empty', { hint: list })
  // This project's sessions first, so a short id that is unique here stays valid when other projects grow.
  for (const everywhere of [false, true]) {
    const ids = (await listed(sessions, everywhere)).map((summary) => summary.id)
    if (ids.includes(wanted)) return wanted
    const matches = ids.filter((id) => id.startsWith(wanted) || id.endsWith(wanted))
    if (matches.length === 1) return matches[0]
    if (matches.length > 1) {
      const shown = matches.slice(0, 5).join(', ') + (matches.length > 5 ? ', …' : '')
      throw new HostError(`session "${wanted}" is ambiguous: it matches ${matches.length} sessions${everywhere ? ' of several projects' : ''} (${shown})`, { hint: 'give more of the id' })
    }
  }
  throw new HostError(`no session "${wanted}" in ${sessions.dir} or any other project's sessions`, { hint: `${list}, \`${cliCommand(globals, 'sessions', '--all')}\` every project's` })
}

/**
 * `--last`: the most recently updated session of this project (the git top level of --cwd, else --cwd),
 * whichever of its directories it was started in; sessions of other projects sharing the store are skipped.
 */
export async function lastSessionId(sessions: SessionService, globals: Pick<GlobalOptions, 'cwd' | 'config'>): Promise<string> {
  const [last] = await recentSessions(sessions, globals)
  if (!last) throw new HostError(`--last: no saved session of ${projectRoot(globals.cwd)} in ${sessions.dir}`, { hint: `start one: ${cliCommand(globals, 'run', '<prompt>')}` })
  return last.id
}

/**
 * The readable sessions of this project, most recently updated first; `folds` as `SessionService.list`
 * takes them (a goal's phase, say).
 */
export async function recentSessions(sessions: SessionService, globals: Pick<GlobalOptions, 'cwd'>, folds?: Record<string, SummaryFold>): Promise<SessionSummary[]> {
  const project = projectRoot(globals.cwd)
  const mine = (await listed(sessions, false, folds)).filter((summary) => !summary.problem && within(summary.cwd, project))
  return mine.sort((a, b) => b.updatedAt - a.updatedAt || (a.id < b.id ? 1 : -1))
}

/** `dir` is `root` or lies below it. */
function within(dir: string, root: string): boolean {
  if (!dir) return false
  const relative = path.relative(root, dir)
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative))
}

/** The listing, its failures (a store directory that is a link, say) reported like any session error. */
function listed(sessions: SessionService, everywhere: boolean, folds?: Record<string, SummaryFold>) {
  return sessions.list(everywhere || folds ? { ...(everywhere && { everywhere }), ...(folds && { folds }) } : undefined).catch((error) => {
    throw asHostError(error)
  })
}
