// One key per fleet: the id of the key the fleet's sessions are signed with (never the key) is one row of
// `goalkeeper_fleet_key`, set by the first worker. Workers, submitters and readers of the fleet's database
// hold their own key's id against it before they act.
import pg from 'pg'
import { FleetError } from './job.ts'

/** A signing key by its id (never the key), where it comes from and the worker that brought it. */
export interface FleetKey {
  id: string
  source: string
  worker: string
}

/** A key as `SessionService.signingKey()` describes it. */
export interface OwnKey {
  id: string
  source: string
}

interface FleetKeyRow {
  key_id: string
  source: string
  worker: string
}

interface Queryable {
  query(text: string): Promise<{ rows: any[] }>
}

/** The fleet's key in a database, or undefined when no worker recorded one (or it holds no fleet). */
export async function queryFleetKey(db: Queryable): Promise<FleetKey | undefined> {
  const { rows } = await db.query('SELECT key_id, source, worker FROM goalkeeper_fleet_key').catch((error) => {
    // 42P01, no such table: a database of sessions that never held a fleet (reading must not create it).
    if ((error as { code?: unknown }).code === '42P01') return { rows: [] as FleetKeyRow[] }
    throw error
  })
  return rows[0] ? { id: rows[0].key_id, source: rows[0].source, worker: rows[0].worker } : undefined
}

/** `queryFleetKey` on the database at `url`, through one short connection. */
export async function readFleetKey(url: string): Promise<FleetKey | undefined> {
  const client = new pg.Client({ connectionString: url })
  // A connection the server drops must reject the query, not end the process.
  client.on('error', () => {})
  await client.connect()
  try {
    return await queryFleetKey(client)
  } finally {
    await client.end().catch(() => {})
  }
}

/**
 * Refuses (KEY_MISMATCH) when `key` is not the fleet's: everything signed with another key fails
 * verification for the rest of the fleet, and a reader with another key sees only unverifiable sessions.
 * `subject` opens the message, before the key's id (`this worker signs with key`), `consequence` ends it (`no job taken`).
 */
export function assertFleetKey(subject: string, key: OwnKey | undefined, fleet: FleetKey | undefined, consequence: string): void {
  if (!key || !fleet || fleet.id === key.id) return
  throw new FleetError('KEY_MISMATCH',
    `${subject} ${key.id} (${key.source}) but the fleet's sessions are signed with key ${fleet.id} (${fleet.source}, first used by worker ${fleet.worker}); ${consequence}`,
    'give every worker and submitter of this database the same session key (GOALKEEPER_SESSION_KEY or a shared keyFile)')
}
