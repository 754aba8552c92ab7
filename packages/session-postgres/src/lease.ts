import { randomBytes } from 'node:crypto'
import os from 'node:os'
import type pg from 'pg'
import { isAlive } from '@goalkeeper/kit'
import { SessionError } from '@goalkeeper/session'

/** Who writes a session: named in SESSION_LOCKED on other machines; the token tells two writers of one process apart. */
export function newHolder(): { holder: string; token: string } {
  const token = randomBytes(8).toString('hex')
  return { holder: `pid ${process.pid} on ${os.hostname()} (writer ${token.slice(0, 6)})`, token }
}

/**
 * The writer lease of one session, held by this process. Renewed in the background; the database's
 * clock decides expiry, so machines with skewed clocks agree. Once renewal finds the lease taken,
 * `lost` is set and every later write is refused (each write also checks the lease itself).
 */
export class Lease {
  lost?: Error
  private timer?: NodeJS.Timeout
  private renewing?: Promise<void>

  constructor(private pool: pg.Pool, readonly id: string, readonly holder: string, readonly token: string, readonly ttlMs: number, renewMs: number, private where: string) {
    this.timer = setInterval(() => void (this.renewing ??= this.renew().finally(() => (this.renewing = undefined))), renewMs)
    // A lease must not keep a process alive; it expires on its own once the process is gone.
    this.timer.unref()
  }

  /** The error of a write refused because the lease is no longer this writer's. */
  taken(): Error {
    this.lost ??= Object.assign(new Error(`the writer lease of session ${this.id} in ${this.where} was taken by another writer (this one stopped renewing it for longer than ${this.ttlMs} ms); it is no longer written here`), { code: 'SESSION_LOST', reason: 'taken' })
    return this.lost
  }

  private async renew() {
    if (this.lost) return
    try {
      const { rowCount } = await this.pool.query(`UPDATE goalkeeper_session_leases SET expires_at = now() + $3 * interval '1 millisecond' WHERE session_id = $1 AND token = $2`, [this.id, this.token, this.ttlMs])
      if (rowCount === 0) this.taken()
    } catch {
      // Unreachable for now: the next renewal or write tries again; past the expiry another writer may take over.
    }
  }

  /** Stops renewing and gives the lease up (unless it was taken). */
  async release(): Promise<void> {
    clearInterval(this.timer)
    await this.renewing
    if (this.lost) return
    await this.pool.query('DELETE FROM goalkeeper_session_leases WHERE session_id = $1 AND token = $2', [this.id, this.token])
  }
}

interface LeaseRow {
  got: boolean
  holder: string | null
  token: string | null
  host: string | null
  pid: number | null
  expires_at: Date | null
}

/**
 * Takes the lease of `id` when nobody holds it, its holder stopped renewing it, or its holder was a
 * process of this host that no longer runs (a crashed writer never blocks the next one on its machine,
 * as with lock files). Throws SESSION_LOCKED naming the live holder.
 */
export async function takeLease(client: pg.Pool | pg.PoolClient, id: string, holder: string, token: string, ttlMs: number, where: string): Promise<void> {
  const host = os.hostname()
  let deadToken: string | null = null
  for (let attempt = 0; attempt < 3; attempt++) {
    const previous: string | null = attempt ? deadToken : null
    const { rows }: pg.QueryResult<LeaseRow> = await (client as pg.Pool).query<LeaseRow>(
      `WITH taken AS (
         INSERT INTO goalkeeper_session_leases (session_id, holder, token, host, pid, expires_at)
         VALUES ($1, $2, $3, $4, $5, now() + $6 * interval '1 millisecond')
         ON CONFLICT (session_id) DO UPDATE SET holder = EXCLUDED.holder, token = EXCLUDED.token, host = EXCLUDED.host, pid = EXCLUDED.pid, acquired_at = now(), expires_at = EXCLUDED.expires_at
         WHERE goalkeeper_session_leases.expires_at < now() OR goalkeeper_session_leases.token = $7
         RETURNING 1)
       SELECT EXISTS (SELECT FROM taken) AS got, l.holder, l.token, l.host, l.pid, l.expires_at
       FROM (SELECT 1) AS one LEFT JOIN goalkeeper_session_leases AS l ON l.session_id = $1`,
      [id, holder, token, host, process.pid, ttlMs, previous],
    )
    const row: LeaseRow = rows[0]
    if (row.got) return
    // The insert waited for a racing writer's commit and met its row, but the statement's snapshot is
    // older than that commit: the holder is not visible yet. The next attempt's snapshot shows it.
    if (row.holder === null) continue
    // A holder on this host whose process is gone: take its lease now, only if it is still that one's.
    if (row.host === host && row.pid !== null && row.pid !== process.pid && !isAlive(row.pid) && row.token) {
      deadToken = row.token
      continue
    }
    const until = row.expires_at ? ` (lease renewed until ${row.expires_at.toISOString()})` : ''
    throw Object.assign(new SessionError('SESSION_LOCKED', `session ${id} is open for writing by ${row.holder ?? 'another writer'}${until}`, where), { holder: row.holder })
  }
  throw new SessionError('SESSION_LOCKED', `session ${id}: could not take the writer lease (it keeps changing hands)`, where)
}
