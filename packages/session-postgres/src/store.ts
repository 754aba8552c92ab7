import pg from 'pg'
import { type Appender, type AppenderOptions, type LogChunk, type NewestSessions, SessionError, type SessionStore, type StoreWriter } from '@goalkeeper/session'
import { PgAppender } from './appender.ts'
import { Lease, newHolder, takeLease } from './lease.ts'
import { migrate } from './migrations.ts'
import { guardConnections, isConnectionLoss, withRetry } from './setup.ts'
import { headerFacts, lineFacts } from './summary.ts'
import { checkUrl, maskUrl } from './url.ts'

export interface PostgresStoreOptions {
  /** How long a writer's lease lasts without renewal; another writer may take it after that (default 30 s). */
  leaseMs?: number
  /** How often a held lease is renewed (default a third of leaseMs). */
  renewMs?: number
  /** Connections in the pool (default 4). */
  poolSize?: number
  /** Tries at connecting and setting up the schema when the connection is lost on the way (default 8, with backoff). */
  setupAttempts?: number
  /** Told before each retry of the set-up (for a log line). */
  onRetry?: (error: unknown, attempt: number) => void
}

const PAGE = 2000
/** The first page of a stream: a reader after the header alone (an open from a checkpoint) reads little more. */
const FIRST_PAGE = 64

/**
 * Session logs in PostgreSQL: one row per record line, one row per session (its size, a version that
 * every change to its records bumps, and facts for SQL inspection), one lease row per session being written, and the
 * listing's signed summary per session (kept by the service, verified before use). Open with `openPostgresStore`, which migrates the schema.
 */
export class PostgresSessionStore implements SessionStore {
  readonly location: string
  /** Every machine that reaches the database reads and writes these logs. */
  readonly shared = true
  private holders = 0
  private released?: () => void
  private leaseMs: number
  private renewMs: number
  private versionsWanted?: Map<string, { resolve(version: { size: number; token: string }): void; reject(error: unknown): void }[]>

  constructor(readonly pool: pg.Pool, url: string, options: PostgresStoreOptions = {}) {
    this.location = maskUrl(url)
    this.leaseMs = options.leaseMs ?? 30_000
    this.renewMs = options.renewMs ?? Math.max(1, Math.floor(this.leaseMs / 3))
  }

  locationOf(id: string): string {
    return `${this.location}#${id}`
  }

  async create(id: string, content: Buffer, seal?: string): Promise<StoreWriter> {
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
    await inTransaction(this.pool, async (client) => {
      const created = await client.query(
        `INSERT INTO goalkeeper_sessions (id, created_at, updated_at, records, bytes, title, cwd, parent_id, parent_seq, seal)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (id) DO NOTHING`,
        [id, createdAt, updatedAt ?? createdAt, lines.length, size, title ?? null, cwd, parent?.id ?? null, parent?.seq ?? null, seal ?? null],
      )
      if (created.rowCount === 0) throw new SessionError('SESSION_EXISTS', `session ${id} already exists: ${this.locationOf(id)}`, this.locationOf(id))
      await takeLease(client, id, holder, token, this.leaseMs, this.locationOf(id))
      await client.query(
        `INSERT INTO goalkeeper_session_records (session_id, seq, byte_offset, line) SELECT $1, r.seq - 1, r.byte_offset, r.line FROM unnest($2::bigint[], $3::text[]) WITH ORDINALITY AS r (byte_offset, line, seq)`,
        [id, offsets, lines],
      )
    })
    return this.writer(id, holder, token, title !== undefined)
  }

  async openForWrite(id: string): Promise<{ size: number; chunks: AsyncIterable<LogChunk>; writer: StoreWriter }> {
    const { holder, token } = newHolder()
    // The session must exist first: a lease row for nothing would block its creation.
    const found = await this.pool.query<{ title: string | null }>('SELECT title FROM goalkeeper_sessions WHERE id = $1', [id])
    if (!found.rows.length) throw this.notFound(id)
    await takeLease(this.pool, id, holder, token, this.leaseMs, this.locationOf(id))
    const writer = this.writer(id, holder, token, found.rows[0].title !== null)
    try {
      // Read under the lease: no other writer can move the size until this one lets go.
      const { size } = await this.version(id)
      return { size, chunks: this.lines(id, { end: size }), writer }
    } catch (error) {
      await writer.close()
      throw error
    }
  }

  /** The seal column of the session row, which a batch writes with the lines it makes durable. */
  async readSeal(id: string): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ seal: string | null }>('SELECT seal FROM goalkeeper_sessions WHERE id = $1', [id])
    if (!rows.length) throw this.notFound(id)
    return rows[0].seal ?? undefined
  }

  /** The checkpoint index column of the session row. */
  async readCheckpointIndex(id: string): Promise<string | undefined> {
    const { rows } = await this.pool.query<{ index: string | null }>('SELECT checkpoint_index AS index FROM goalkeeper_sessions WHERE id = $1', [id])
    if (!rows.length) throw this.notFound(id)
    return rows[0].index ?? undefined
  }

  /** One statement on the session row: it is replaced whole or not at all. */
  async writeCheckpointIndex(id: string, text: string): Promise<void> {
    const { rowCount } = await this.pool.query('UPDATE goalkeeper_sessions SET checkpoint_index = $2 WHERE id = $1', [id, text])
    if (!rowCount) throw this.notFound(id)
  }

  /**
   * The log's bytes in the JSONL form, a page of rows per chunk (never the whole log in one buffer). Rows
   * are picked by `byte_offset`; the first and last chunk are cut to the range's exact bytes. A range
   * that starts later (a log read from its last checkpoint) starts at the row that holds its first byte,
   * found from the log's end: the rows before it are not read.
   */
  stream(id: string, range: { start?: number; end?: number } = {}): AsyncIterable<Buffer> {
    return this.pages(id, range, false) as AsyncIterable<Buffer>
  }

  /**
   * `stream` for replay: the rows of a page inside the range handed on as they came, lines without
   * their newlines (their text is not encoded into bytes only for replay to decode it and split it again).
   */
  lines(id: string, range: { start?: number; end?: number } = {}): AsyncIterable<LogChunk> {
    return this.pages(id, range, true)
  }

  private async *pages(id: string, range: { start?: number; end?: number }, asLines: boolean): AsyncIterable<LogChunk> {
    const start = Math.max(0, range.start ?? 0)
    const end = range.end ?? Number.MAX_SAFE_INTEGER
    // Pages are seq ranges, not `seq > n LIMIT k`: a range reads only its rows whatever plan the server
    // picks (a log just written has no statistics yet, and a plan that sorted all its rows per page made
    // a 100,000-record replay five times slower). The last seq is taken once: the log as it was then.
    // The row of the start byte is the last one at or before it, by seq: a backward walk of the primary
    // key over the rows after it only. (A row whose offset was edited by hand out of order with the
    // others may then be left out; what is read from there is verified, and a whole read finds it.)
    const at = start > 0
      ? '(SELECT seq FROM goalkeeper_session_records WHERE session_id = $1 AND byte_offset <= $2 ORDER BY seq DESC LIMIT 1)'
      : 'NULL::integer'
    const bounds = await this.pool.query<{ first: number | null; last: number | null; found: boolean; at: number | null }>(
      `SELECT (SELECT min(seq) FROM goalkeeper_session_records WHERE session_id = $1) AS first,
              (SELECT max(seq) FROM goalkeeper_session_records WHERE session_id = $1) AS last,
              EXISTS (SELECT FROM goalkeeper_sessions WHERE id = $1) AS found,
              ${at} AS at`,
      start > 0 ? [id, start] : [id],
    )
    if (!bounds.rows[0].found) throw this.notFound(id)
    const lastSeq = bounds.rows[0].last ?? -1
    // From the start (what replay and listing ask), the rows need no test of where they end.
    const page = (from: number, count: number) => this.pool.query<[string, string]>({
      text: start === 0
        ? 'SELECT byte_offset, line FROM goalkeeper_session_records WHERE session_id = $1 AND seq BETWEEN $2 AND $4 AND byte_offset < $3 ORDER BY seq'
        : `SELECT byte_offset, line FROM goalkeeper_session_records
           WHERE session_id = $1 AND seq BETWEEN $2 AND $4 AND byte_offset < $3 AND byte_offset + octet_length(line) + 1 > $5
           ORDER BY seq`,
      values: start === 0 ? [id, from, end, from + count - 1] : [id, from, end, from + count - 1, start],
      rowMode: 'array',
    })
    let from = bounds.rows[0].at ?? Math.min(0, bounds.rows[0].first ?? 0)
    // From the start, the first page is short: it may be all a reader wants (the header).
    let count = start === 0 ? FIRST_PAGE : PAGE
    let next: ReturnType<typeof page> | undefined
    for (let first = start === 0; ; first = false) {
      const { rows } = await (next ?? page(from, count))
      from += count
      count = PAGE
      const done = from > lastSeq
      next = undefined
      // Asked for before this page is used, so the query runs while replay parses and checks; not after
      // that short first page.
      if (!done && !first) {
        next = page(from, count)
        // A reader that stops early never awaits it: its failure must not go unhandled.
        next.catch(() => {})
      }
      if (!rows.length) {
        if (done) return
        continue
      }
      const [firstOffset] = rows[0]
      const [lastOffset, lastLine] = rows[rows.length - 1]
      let chunk: Buffer
      if (Number(firstOffset) >= start && Number(lastOffset) + Buffer.byteLength(lastLine) + 1 <= end) {
        // Inside the range (every page but the edges of one): the rows' text as one buffer, or as lines.
        const lines = rows.map((row) => row[1])
        if (asLines) {
          yield lines
          if (done) return
          continue
        }
        chunk = Buffer.from(`${lines.join('\n')}\n`)
      } else {
        // Each row cut by its own offset, so rows whose offsets do not follow on (written by hand) are
        // still streamed whole, for replay to judge.
        const parts: Buffer[] = []
        for (const [offset, line] of rows) {
          let bytes = Buffer.from(`${line}\n`)
          const at = Number(offset)
          if (at + bytes.length > end) bytes = bytes.subarray(0, end - at)
          if (at < start) bytes = bytes.subarray(start - at)
          parts.push(bytes)
        }
        chunk = Buffer.concat(parts)
      }
      if (chunk.length) yield chunk
      if (done) return
    }
  }

  /**
   * The size and the version that any change to the session's records draws from a sequence (triggers of
   * migration 2, so hand edits count too): a token is never reused, not even for a new session of the same id.
   * Calls made together (a listing checks sixteen sessions at once) share one query.
   */
  version(id: string): Promise<{ size: number; token: string }> {
    return new Promise((resolve, reject) => {
      if (!this.versionsWanted) {
        this.versionsWanted = new Map()
        setImmediate(() => this.fetchVersions())
      }
      const waiting = this.versionsWanted.get(id) ?? []
      waiting.push({ resolve, reject })
      this.versionsWanted.set(id, waiting)
    })
  }

  private async fetchVersions(): Promise<void> {
    const wanted = this.versionsWanted!
    this.versionsWanted = undefined
    try {
      // The size is where the last row ends, not the row's `bytes`: a row added by hand must be read (and found unsigned).
      const { rows } = await this.pool.query<{ id: string; size: string; version: string }>(
        `SELECT s.id, s.version, COALESCE((SELECT r.byte_offset + octet_length(r.line) + 1 FROM goalkeeper_session_records r
           WHERE r.session_id = s.id ORDER BY r.seq DESC LIMIT 1), 0) AS size
         FROM goalkeeper_sessions s WHERE s.id = ANY($1::text[])`,
        [[...wanted.keys()]],
      )
      const found = new Map(rows.map((row) => [row.id, { size: Number(row.size), token: `${row.version}:${row.size}` }]))
      for (const [id, waiting] of wanted) {
        const version = found.get(id)
        for (const { resolve, reject } of waiting) version ? resolve(version) : reject(this.notFound(id))
      }
    } catch (error) {
      for (const waiting of wanted.values()) for (const { reject } of waiting) reject(error)
    }
  }

  /**
   * The `limit` sessions of newest activity with their versions and kept summaries, and the count of
   * all, in one query: the `updated_at` index gives the order, so only the rows returned are read.
   */
  async newest(limit: number): Promise<NewestSessions> {
    const { rows } = await this.pool.query<{ id: string; updated_at: string; version: string; size: string; summary: string | null; total: string }>(
      `SELECT s.id, s.updated_at, s.version, m.summary, (SELECT count(*) FROM goalkeeper_sessions) AS total,
              COALESCE((SELECT r.byte_offset + octet_length(r.line) + 1 FROM goalkeeper_session_records r
                WHERE r.session_id = s.id ORDER BY r.seq DESC LIMIT 1), 0) AS size
       FROM (SELECT id, updated_at, version FROM goalkeeper_sessions ORDER BY updated_at DESC, id COLLATE "C" DESC LIMIT $1) s
       LEFT JOIN goalkeeper_session_summaries m ON m.session_id = s.id
       ORDER BY s.updated_at DESC, s.id COLLATE "C" DESC`,
      [limit],
    )
    return {
      total: rows.length ? Number(rows[0].total) : 0,
      sessions: rows.map((row) => ({
        id: row.id,
        updatedAt: Number(row.updated_at),
        version: { size: Number(row.size), token: `${row.version}:${row.size}` },
        ...(row.summary !== null && { summary: row.summary }),
      })),
    }
  }

  async list(): Promise<string[]> {
    const { rows } = await this.pool.query<{ id: string }>('SELECT id FROM goalkeeper_sessions')
    return rows.map((row) => row.id)
  }

  async readSummaries(): Promise<Map<string, string>> {
    const { rows } = await this.pool.query<[string, string]>({ text: 'SELECT session_id, summary FROM goalkeeper_session_summaries', rowMode: 'array' })
    return new Map(rows)
  }

  async writeSummaries(entries: ReadonlyMap<string, string>, removed: readonly string[]): Promise<void> {
    if (entries.size) {
      // Only for sessions that still exist: one removed meanwhile leaves no summary behind.
      await this.pool.query(
        `INSERT INTO goalkeeper_session_summaries (session_id, summary)
         SELECT e.id, e.summary FROM unnest($1::text[], $2::text[]) AS e (id, summary) JOIN goalkeeper_sessions s ON s.id = e.id
         ON CONFLICT (session_id) DO UPDATE SET summary = EXCLUDED.summary`,
        [[...entries.keys()], [...entries.values()]],
      )
    }
    if (removed.length) await this.pool.query('DELETE FROM goalkeeper_session_summaries WHERE session_id = ANY($1::text[])', [removed])
  }

  async remove(id: string): Promise<void> {
    const { holder, token } = newHolder()
    await inTransaction(this.pool, async (client) => {
      await takeLease(client, id, holder, token, this.leaseMs, this.locationOf(id))
      await client.query('DELETE FROM goalkeeper_sessions WHERE id = $1', [id])
      await client.query('DELETE FROM goalkeeper_session_leases WHERE session_id = $1', [id])
    })
  }

  retain(): () => void {
    this.holders++
    let held = true
    return () => {
      if (!held) return
      held = false
      if (--this.holders === 0) this.released?.()
    }
  }

  /** Resolves once every `retain` was let go. */
  whenReleased(): Promise<void> {
    return this.holders ? new Promise((resolve) => (this.released = resolve)) : Promise.resolve()
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
    await inTransaction(this.store.pool, async (client) => {
      const held = await client.query('SELECT 1 FROM goalkeeper_session_leases WHERE session_id = $1 AND token = $2 FOR UPDATE', [id, token])
      if (!held.rowCount) throw this.lease.taken()
      await client.query('INSERT INTO goalkeeper_session_tails (session_id, size, bytes) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [id, size, tail])
      await client.query('DELETE FROM goalkeeper_session_records WHERE session_id = $1 AND byte_offset >= $2', [id, size])
      await client.query('UPDATE goalkeeper_sessions SET bytes = $2, records = (SELECT count(*) FROM goalkeeper_session_records WHERE session_id = $1) WHERE id = $1', [id, size])
    })
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

/** Runs `work` in one transaction on a connection of its own: committed if it resolves, rolled back if not. */
async function inTransaction(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<void>): Promise<void> {
  const client = await pool.connect()
  try {
    await client.query('BEGIN')
    await work(client)
    await client.query('COMMIT')
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {})
    throw error
  } finally {
    client.release()
  }
}

/**
 * Connects to `url`, brings the schema up to date and returns the store. Errors name the database
 * (password masked) and what failed: the URL, the connection, or the migration.
 */
export async function openPostgresStore(url: string, options: PostgresStoreOptions = {}): Promise<PostgresSessionStore> {
  checkUrl(url)
  const masked = maskUrl(url)
  // Every connection gets an error listener: a dropped one, idle or in a transaction, must not crash the
  // process; the query it ran rejects, and the next query reconnects.
  const pool = guardConnections(new pg.Pool({ connectionString: url, max: options.poolSize ?? 4, connectionTimeoutMillis: 10_000 }))
  let step = 'connect to it'
  let connected = false
  try {
    await withRetry(async () => {
      step = 'connect to it'
      const client = await pool.connect()
      client.release()
      connected = true
      step = 'migrate the session schema'
      await migrate(pool)
    }, {
      attempts: options.setupAttempts ?? 8,
      // A database that never answered is told at once (a wrong URL, a server that is down); one lost after
      // it answered (a restart, a terminated backend) or still starting up is tried again.
      retryable: (error) => isConnectionLoss(error) && (connected || (error as { code?: unknown }).code === '57P03'),
      onRetry: options.onRetry,
    })
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
