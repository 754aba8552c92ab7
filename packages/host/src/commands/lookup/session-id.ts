import type { SessionService } from '@goalkeeper/session'
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
  const ids = (await listed(sessions)).map((summary) => summary.id)
  if (ids.includes(wanted)) return wanted
  const matches = ids.filter((id) => id.startsWith(wanted) || id.endsWith(wanted))
  if (matches.length === 1) return matches[0]
  if (matches.length > 1) {
    const shown = matches.slice(0, 5).join(', ') + (matches.length > 5 ? ', …' : '')
    throw new HostError(`session "${wanted}" is ambiguous: it matches ${matches.length} sessions (${shown})`, { hint: 'give more of the id' })
  }
  // Sessions live under the workspace (--cwd) by default: a wrong directory is the usual cause.
  throw new HostError(`no session "${wanted}" in ${sessions.dir}`, { hint: `${list}; sessions are kept per workspace, so check --cwd` })
}

/** `--last`: the most recently updated session of this workspace (sessions of other cwds sharing the store are skipped). */
export async function lastSessionId(sessions: SessionService, globals: Pick<GlobalOptions, 'cwd' | 'config'>): Promise<string> {
  const mine = (await listed(sessions)).filter((summary) => summary.cwd === globals.cwd)
  const last = mine.sort((a, b) => b.updatedAt - a.updatedAt || (a.id < b.id ? 1 : -1))[0]
  if (!last) throw new HostError(`--last: no saved session of ${globals.cwd} in ${sessions.dir}`, { hint: `start one: ${cliCommand(globals, 'run', '<prompt>')}` })
  return last.id
}

/** The listing, its failures (a store directory that is a link, say) reported like any session error. */
function listed(sessions: SessionService) {
  return sessions.list().catch((error) => {
    throw asHostError(error)
  })
}
