import type { OwnKey } from '@goalkeeper/fleet'
import type { SessionService } from '@goalkeeper/session'
import type { App } from '../../app.ts'
import { HostError } from '../../errors.ts'
import { fleetHostError } from '../fleet/fleet-app.ts'

/** How a command other than the worker names its own key in the fleet's KEY_MISMATCH line. */
export const COMMAND_KEY = "this command's session key is"

/**
 * The key this composition's sessions sign with, or undefined without a session entry. When no session
 * service came up because an entry failed (the fleet commands load up to the fleet and session entries),
 * the command is refused in one line naming the failures: the key would go unchecked.
 */
export async function compositionKey(app: App, purpose: string): Promise<OwnKey | undefined> {
  const failed = app.report.entries.flatMap((entry) => (entry.status === 'failed' && entry.error ? [entry.error] : []))
  // Only a failure that leaves no session service matters here: a submitter need not hold, say, the
  // workers' push token that the fleet entry's git config reads from the environment.
  if (failed.length && !app.ctx.get('sessions')) {
    throw new HostError(`${purpose} needs ctx.sessions, to check its key against the fleet's: ${failed.join('; ')}`, { hint: 'fix the entry in cordis.yml (or the database it names)' })
  }
  try {
    return await app.ctx.get('sessions')?.signingKey()
  } catch (error) {
    throw fleetHostError(error)
  }
}

/**
 * Refuses, with the workers' KEY_MISMATCH line, to read the sessions of a fleet's database with another
 * key than the fleet's: every session would only show as unverifiable. A database without a fleet passes.
 */
export async function assertFleetKeyOf(sessions: SessionService, url: string, consequence: string): Promise<void> {
  // Loaded only here: reading files never pays for the queue's modules.
  const { assertFleetKey, readFleetKey } = await import('@goalkeeper/fleet')
  try {
    assertFleetKey(COMMAND_KEY, await sessions.signingKey(), await readFleetKey(url), consequence)
  } catch (error) {
    throw fleetHostError(error)
  }
}
