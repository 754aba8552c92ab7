import pg from 'pg'
import { type Appender, type AppenderOptions, SessionError, type SessionStore, type SessionSummary, type StoreWriter } from '@goalkeeper/session'
import { PgAppender } from './appender.ts'
import { Lease, newHolder, takeLease } from './lease.ts'
import { migrate } from './migrations.ts'
import { headerFacts, lineFacts, summaryOf, type SummaryRow } from './summary.ts'
import { checkUrl, maskUrl } from './url.ts'

export interface PostgresStoreOptions {
  /** How long a writer's lease lasts without renewal; another writer may take it after that (default 30 s). */
  leaseMs?: number
  /** How often a held lease is renewed (default a third of leaseMs). */
  renewMs?: number
  /** A log larger than this is refused at open (SESSION_TOO_LARGE), before it is read. */
  maxReadBytes?: number
  /** Connections in the pool (default 4). */
  poolSize?: number
}

const PAGE = 2000

/**
 * Session logs in PostgreSQL: one row per record line, one summary row per session (what `sessions`
 * lists), one lease row per session being written. Open with `openPostgresStore`, which migrates the schema.
 */
export class PostgresSessionStore implements SessionStore {
  readonly location: string
  private leaseMs: number
  private renewMs: number
  private maxReadBytes: number

  constructor(readonly pool: pg.Pool, url: string, options: PostgresStoreOptions = {}) {
    this.location = maskUrl(url)
    this.leaseMs = options.leaseMs ?? 30_000
    this.renewMs = options.renewMs ?? Math.max(1, Math.floor(this.leaseMs / 3))
    this.maxReadBytes = options.maxReadBytes ?? Number.MAX_SAFE_INTEGER
  }

  locationOf(id: string): string {
    return `${this.location}#${id}`
  }

  async create(id: string, content: Buffer): Promise<StoreWriter> {
    const lines = content.toString('utf8').split('\n').slice(0, -1)
    const { createdAt, cwd, parent } = headerFacts(lines[0])
    const { updatedAt, title } = lineFacts(lines, { found: false })
    const offsets: number[] = []
    let size = 0
    for (const line of lines) {
      offsets.push(size)
      size += Buffer.byteLength(line) + 1
    }
    const { holder, token } = newHolder()
    const client = await this.pool.connect()
    try {
      await client.query('BEGIN')
      const created = await client.query(
        `INSERT INTO goalkeeper_sessions (id, created_at, updated_at, records, bytes, title, cwd, parent_id, parent_seq)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (id) DO NOTHING`,
        [id, createdAt, updatedAt ?? createdAt, lines.length, size, title ?? null, cwd, parent?.id ?? null, parent?.seq ?? null],
      )
      if (created.rowCount === 0) throw new SessionError('SESSION_EXISTS', `session ${id} already exists: ${this.locationOf(id)}`, this.locationOf(id))
      await takeLease(client, id, holder, token, this.leaseMs, this.locationOf(id))
      await client.query(
        `INSERT INTO goalkeeper_session_records (session_id, seq, byte_offset, line) SELECT $1, r.seq - 1, r.byte_offset, r.line FROM unnest($2::bigint[], $3::text[]) WITH ORDINALITY AS r (byte_offset, line, seq)`,
        [id, offsets, lines],
      )
      await client.query('COMMIT')
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {})
      throw error
    } finally {
      client.release()
    }
    return this.writer(id, holder, token, title !== undefined)
  }

  async openForWrite(id: string): Promise<{ bytes: Buffer; writer: StoreWriter }> {
    const { holder, token } = newHolder()
    // The session must exist first: a lease row for nothing would block its creation.
    const { rows } = await this.pool.query<{ title: string | null }>('SELECT title FROM goalkeeper_sessions WHERE id = $1', [id])
    if (!rows.length) throw this.notFound(id)
    await takeLease(this.pool, id, holder, token, this.leaseMs, this.locationOf(id))
    const writer = this.writer(id, holder, token, rows[0].title !== null)
    try {
      return { bytes: await this.read(id), writer }
    } catch (error) {
      await writer.close()
      throw error
    }
  }

  async read(id: string): Promise<Buffer> {
    // The size check first, so an oversized log is refused before it is read.
    const { rows } = await this.pool.query<{ bytes: string }>('SELECT bytes FROM goalkeeper_sessions WHERE id = $1', [id])
    if (!rows.length) throw this.notFound(id)
    const { bytes } = rows[0]
    if (Number(bytes) > this.maxReadBytes) {
      throw new SessionError('SESSION_TOO_LARGE', `session ${id} is ${mebibytes(Number(bytes))}, more than the ${mebibytes(this.maxReadBytes)} a session may have to be opened (maxOpenBytes of the session plugin): raise it on a machine with the memory, or start a new session`, this.locationOf(id))
    }
    // Rows as arrays (no object per row), joined here: measured faster than string_agg on the server.
    const lines = await this.pool.query<[string]>({ text: 'SELECT line FROM goalkeeper_session_records WHERE session_id = $1 ORDER BY seq', values: [id], rowMode: 'array' })
    let text = ''
    for (const [line] of lines.rows) text += `${line}\n`
    return Buffer.from(text)
  }

  async *stream(id: string): AsyncIterable<Buffer> {
    let after = -1
    for (;;) {
      const { rows } = await this.pool.query<{ seq: number; line: string }>('SELECT seq, line FROM goalkeeper_session_records WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3', [id, after, PAGE])
      if (after < 0 && !rows.length) {
        const found = await this.pool.query('SELECT 1 FROM goalkeeper_sessions WHERE id = $1', [id])
        if (!found.rowCount) throw this.notFound(id)
      }
      if (!rows.length) return
      yield Buffer.from(`${rows.map((row) => row.line).join('\n')}\n`)
      after = rows[rows.length - 1].seq
      if (rows.length < PAGE) return
    }
  }

  async list(): Promise<string[]> {
    const { rows } = await this.pool.query<{ id: string }>('SELECT id FROM goalkeeper_sessions')
    return rows.map((row) => row.id)
  }

  /** Every session's summary from its row, without reading a single record. */
  async summaries(): Promise<SessionSummary[]> {
    const { rows } = await this.pool.query<SummaryRow>('SELECT id, created_at, updated_at, records, title, cwd, parent_id, parent_seq FROM goalkeeper_sessions')
    return rows.map((row) => summaryOf(row, this.locationOf(row.id)))
  }

  async remove(id: string): Promise<void> {
    const { holder, token } = newHolder()
    const client = await this.pool.connect()
    try {
      await client.query('BEGIN')
      await takeLease(client, id, holder, token, this.leaseMs, this.locationOf(id))
      await client.query('DELETE FROM goalkeeper_sessions WHERE id = $1', [id])
      await client.query('DELETE FROM goalkeeper_session_leases WHERE session_id = $1', [id])
      await client.query('COMMIT')
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {})
      throw error
    } finally {
      client.release()
    }
  }

  async close(): Promise<void> {
    await this.pool.end()
  }

  private writer(id: string, holder: string, token: string, titleFound: boolean): StoreWriter {
    const lease = new Lease(this.pool, id, holder, token, this.leaseMs, this.renewMs, this.locationOf(id))
    return new PgStoreWriter(this, lease, { found: titleFound })
  }

  private notFound(id: string) {
    return new SessionError('SESSION_NOT_FOUND', `session ${id} not found in ${this.location}`, this.locationOf(id))
  }
}

class PgStoreWriter implements StoreWriter {
  private appenderOf?: PgAppender

  constructor(private store: PostgresSessionStore, private lease: Lease, private title: { found: boolean }) {}

  /** A log in the database is never torn by a crash; this runs only for a row someone made unparsable. */
  async cutTail(size: number, tail: Buffer): Promise<string> {
    const { id, token } = this.lease
    const client = await this.store.pool.connect()
    try {
      await client.query('BEGIN')
      const held = await client.query('SELECT 1 FROM goalkeeper_session_leases WHERE session_id = $1 AND token = $2 FOR UPDATE', [id, token])
      if (!held.rowCount) throw this.lease.taken()
      await client.query('INSERT INTO goalkeeper_session_tails (session_id, size, bytes) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [id, size, tail])
      await client.query('DELETE FROM goalkeeper_session_records WHERE session_id = $1 AND byte_offset >= $2', [id, size])
      await client.query('UPDATE goalkeeper_sessions SET bytes = $2, records = (SELECT count(*) FROM goalkeeper_session_records WHERE session_id = $1) WHERE id = $1', [id, size])
      await client.query('COMMIT')
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {})
      throw error
    } finally {
      client.release()
    }
    return `${this.store.locationOf(id)} (goalkeeper_session_tails, size ${size})`
  }

  appender(size: number, lastSeq: number, options: AppenderOptions): Appender {
    this.appenderOf = new PgAppender(this.store.pool, this.lease, size, lastSeq, this.title, options)
    return this.appenderOf
  }

  async close(): Promise<void> {
    try {
      await this.appenderOf?.close()
    } finally {
      await this.lease.release()
    }
  }
}

function mebibytes(bytes: number): string {
  return `${(bytes / 2 ** 20).toFixed(1)} MiB`
}

/**
 * Connects to `url`, brings the schema up to date and returns the store. Errors name the database
 * (password masked) and what failed: the URL, the connection, or the migration.
 */
export async function openPostgresStore(url: string, options: PostgresStoreOptions = {}): Promise<PostgresSessionStore> {
  checkUrl(url)
  const masked = maskUrl(url)
  const pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 4, connectionTimeoutMillis: 10_000 })
  // An idle connection dropped by the server must not crash the process; the next query reconnects.
  pool.on('error', () => {})
  let step = 'connect to it'
  try {
    const client = await pool.connect()
    client.release()
    step = 'migrate the session schema'
    await migrate(pool)
  } catch (error) {
    await pool.end().catch(() => {})
    const password = safePassword(url)
    const why = (error as Error).message || String((error as NodeJS.ErrnoException).code ?? error)
    const message = `database ${masked}: cannot ${step}: ${password ? why.split(password).join('***') : why}`
    // No `cause`: loggers print it on a line of its own, and the message already says it all.
    throw Object.assign(new Error(message), { code: 'SESSION_DATABASE' })
  }
  return new PostgresSessionStore(pool, url, options)
}

function safePassword(url: string): string | undefined {
  try {
    const password = decodeURIComponent(new URL(url).password)
    return password || undefined
  } catch {
    return undefined
  }
}
