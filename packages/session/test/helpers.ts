import { afterAll, afterEach, describe, expect, it, onTestFinished } from 'vitest'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { Context, type Fiber, Logger } from 'cordis'
import type { SessionService, SessionStore, UserMessage } from '@goalkeeper/session'
import { BatchSigner, loadKey, type SegmentEntry, signSegmentIndex, Signer } from '../src/integrity.ts'
import { randomBytes } from 'node:crypto'
import { countCalls, createTestDatabase, type MarkRecord, type OwnedDatabase, pg, sessionStack, type SessionStackConfig, writeClosedSessions } from '@goalkeeper/test-kit'
import { openPostgresStore } from '@goalkeeper/session-postgres'
import { JsonlFileStore } from '@goalkeeper/session-jsonl'

/**
 * The store the contract suite runs on. The test files run on JSONL files; each file of `postgres/`
 * imports one of them after `postgres/use-postgres.ts`, which switches it to the PostgreSQL store.
 */
export type StoreKind = 'files' | 'postgres'
export const STORE: StoreKind = (globalThis as { GOALKEEPER_TEST_STORE?: StoreKind }).GOALKEEPER_TEST_STORE ?? 'files'

/**
 * The log format the suite runs on: 2 (one mac per batch, what new sessions get), or 1 (a mac on every
 * line) for the files of `v1/`, which set it through `v1/use-v1.ts` before importing a suite file.
 */
export const LOG_VERSION: 1 | 2 = (globalThis as { GOALKEEPER_TEST_LOG_VERSION?: 1 | 2 }).GOALKEEPER_TEST_LOG_VERSION ?? 2
/** The suite runs on logs signed per batch: tampering is located to the batch. */
export const BATCHED = LOG_VERSION === 2

/**
 * Segments of the JSONL store: a size for the files of `segmented/` (set through `segmented/use-segments.ts`,
 * tiny, so that their logs roll over many times), else the store's default.
 */
export const SEGMENT_BYTES: number | undefined = (globalThis as { GOALKEEPER_TEST_SEGMENT_BYTES?: number }).GOALKEEPER_TEST_SEGMENT_BYTES

/** A test about files themselves (torn lines, descriptors, fsync, lock files): not part of the PostgreSQL run. */
export const itOnFiles: typeof it = STORE === 'files' ? it : ((() => {}) as unknown as typeof it)
export const describeOnFiles: typeof describe = STORE === 'files' ? describe : ((() => {}) as unknown as typeof describe)

// On PostgreSQL each sessions dir of a test stands for a schema of its own (in one database per test
// file), so tests stay as apart as their temp dirs are: a later launch on the same dir sees the same sessions.
export interface SchemaDatabase {
  /** URL whose connections use only this schema (`options=-c search_path=…`). */
  url: string
  schema: string
  query(text: string, values?: unknown[]): Promise<{ rows: any[] }>
}

let fileDatabase: Promise<OwnedDatabase> | undefined
const schemas = new Map<string, Promise<SchemaDatabase>>()
const bySchema = new Map<string, SchemaDatabase>()
const pools: InstanceType<typeof pg.Pool>[] = []
if (STORE === 'postgres') afterAll(async () => {
  await Promise.all(pools.map((pool) => pool.end()))
  await (await fileDatabase)?.drop()
})

export function databaseFor(dir: string): Promise<SchemaDatabase> {
  let found = schemas.get(dir)
  if (!found) {
    found = (async () => {
      fileDatabase ??= createTestDatabase()
      const db = await fileDatabase
      const schema = `s_${randomBytes(5).toString('hex')}`
      await db.query(`CREATE SCHEMA ${schema}`)
      const url = new URL(db.url)
      url.searchParams.set('options', `-c search_path=${schema}`)
      const pool = new pg.Pool({ connectionString: url.toString(), max: 2 }).on('error', () => {})
      pools.push(pool)
      const made: SchemaDatabase = { url: url.toString(), schema, query: (text, values) => pool.query(text, values as any[]) }
      bySchema.set(schema, made)
      // The schema, as the plugin would make it, so that rows can be written by hand before it starts.
      await (await openPostgresStore(made.url)).close()
      return made
    })()
    schemas.set(dir, found)
  }
  return found
}

/** The schema and session id of a PostgreSQL session location (`postgres://…?options=-c search_path=…#<id>`). */
function pgLocation(file: string): { db: SchemaDatabase; id: string } | undefined {
  if (!file.startsWith('postgres')) return
  const url = new URL(file)
  const schema = /search_path=(\w+)/.exec(url.searchParams.get('options') ?? '')?.[1]
  const db = schema && bySchema.get(schema)
  if (!db) throw new Error(`no test schema for ${file}`)
  return { db, id: decodeURIComponent(url.hash.slice(1)) }
}

/** The signing key of these tests and their child processes, never the user's own. */
/** The listing tests' record: a type of their own, `x`, holding what they later edit by hand (`"i":4`). */
export const mark: MarkRecord = (session, data) => {
  session.append<string>('x', data)
}

export const TEST_KEY = path.join(os.tmpdir(), 'goalkeeper-tests', 'session.key')

/** A segment index for `id` as the service signs it under the tests' key: what a forger holding the key could write. */
export async function signedSegmentIndex(id: string, entries: SegmentEntry[]): Promise<string> {
  return signSegmentIndex(new Signer(await loadKey(TEST_KEY)), id, entries)
}

export interface Logged { type: string; name: string; text: string }

export interface Started {
  root: Context
  fiber: Fiber
  sessions: SessionService
  logs: Logged[]
  /** Resolves with the first captured log line (past or future) that matches. */
  waitLog(match: (log: Logged) => boolean): Promise<Logged>
}

const exporter = { colors: false as const, export: () => {} }

/** A fresh app with the session plugin on `dir`, logs captured (debug and up). */
export async function start(dir: string, config: SessionStackConfig = {}): Promise<Started> {
  const root = new Context()
  const logs: Logged[] = []
  const waiting = new Set<(log: Logged) => void>()
  root.logger.exporter({
    levels: { default: 3 },
    export: (m) => {
      const log = { type: m.type, name: m.name, text: Logger.format(exporter, m) }
      logs.push(log)
      for (const notify of waiting) notify(log)
    },
  })
  const waitLog = (match: (log: Logged) => boolean) => {
    const found = logs.find(match)
    if (found) return Promise.resolve(found)
    return new Promise<Logged>((resolve) => {
      const notify = (log: Logged) => {
        if (!match(log)) return
        waiting.delete(notify)
        resolve(log)
      }
      waiting.add(notify)
    })
  }
  const database = STORE === 'postgres' ? { database: (await databaseFor(dir)).url } : {}
  const segments = STORE === 'files' && SEGMENT_BYTES !== undefined ? { segmentBytes: SEGMENT_BYTES } : {}
  const fiber = await root.plugin(sessionStack, { dir, keyFile: TEST_KEY, logVersion: LOG_VERSION, ...database, ...segments, ...config })
  return { root, fiber, sessions: root.sessions, logs, waitLog }
}

/** A `start` for one test file whose apps are disposed after each test. */
export function appsPerTest(): (dir: string, config?: SessionStackConfig) => Promise<Started> {
  let apps: Started[] = []
  afterEach(async () => {
    for (const app of apps.reverse()) await app.fiber.dispose()
    apps = []
  })
  return async (dir, config) => {
    const app = await start(dir, config)
    apps.push(app)
    return app
  }
}

/**
 * The store of the run (JSONL files, with `options`, or PostgreSQL), counting what listing does per log: the
 * versions it reads and the logs it streams; `reset()` empties both.
 */
export async function countingStore(dir: string, options: { everywhere?: string } = {}) {
  let store: SessionStore
  if (STORE === 'postgres') {
    const opened = await openPostgresStore((await databaseFor(dir)).url)
    onTestFinished(() => opened.close())
    store = opened
  } else store = new JsonlFileStore(dir, options)
  const { calls: { stream: streamed, version: versions }, reset } = countCalls(store, ['stream', 'version'])
  const snapshot = store.snapshot?.bind(store)
  // A snapshot reads the log and takes its version; one declined (a large or segmented log) does neither.
  if (snapshot) {
    store.snapshot = async (id, maxBytes) => {
      const taken = await snapshot(id, maxBytes)
      if (taken) {
        versions.push(id)
        streamed.push(id)
      }
      return taken
    }
  }
  return { store, streamed, versions, reset }
}

/**
 * `count` sessions created through `launch` in `dir`, one record `x` ({ i }) each, closed; their ids in the
 * order of `i`. `atOnce` sessions are written at a time (1: one after another, so the later ones are newer).
 */
export async function closedSessions(launch: (dir: string, config?: SessionStackConfig) => Promise<Started>, dir: string, count: number, config?: SessionStackConfig, atOnce = 1): Promise<string[]> {
  const app = await launch(dir, config)
  const ids = await writeClosedSessions(app.sessions, count, { cwd: dir, atOnce, mark })
  await app.fiber.dispose()
  return ids
}

/** A fresh directory, removed when the test has finished (after its apps are disposed). */
export async function tempDir(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gk-'))
  onTestFinished(() => fs.rm(dir, { recursive: true, force: true }))
  return dir
}

/** The log's lines as stored, with their newlines: the file's text, or the rows in seq order. */
export async function readLog(file: string): Promise<string> {
  const pg = pgLocation(file)
  if (!pg) return (await Promise.all([...await closedSegments(file), file].map((name) => fs.readFile(name, 'utf8')))).join('')
  const { rows } = await pg.db.query('SELECT line FROM goalkeeper_session_records WHERE session_id = $1 ORDER BY seq', [pg.id])
  return rows.map((row) => `${row.line}\n`).join('')
}

/** The closed segments of a JSONL log (`<file>.000001`, ...), oldest first; none for a log of one file. */
export async function closedSegments(file: string): Promise<string[]> {
  const base = path.basename(file)
  const names = await fs.readdir(path.dirname(file)).catch(() => [] as string[])
  return names.filter((name) => name.startsWith(`${base}.`) && /^\d{6}$/.test(name.slice(base.length + 1))).sort().map((name) => path.join(path.dirname(file), name))
}

/**
 * Replaces the log's lines as someone with access to the store would: the file rewritten, or the rows
 * deleted and inserted again (at the offsets of the JSONL form). The seal is left as it is.
 */
export async function replaceLog(file: string, lines: string[]): Promise<void> {
  const pg = pgLocation(file)
  if (!pg) {
    // A log kept in segments is written back as one file (its segments and their index removed): the
    // edit is then one of a single file, whose offsets are those of the concatenation it replaces.
    for (const segment of await closedSegments(file)) await fs.unlink(segment)
    await fs.rm(`${file}.segments`, { force: true })
    return fs.writeFile(file, lines.map((line) => `${line}\n`).join(''))
  }
  const offsets = lines.map((_, i) => lines.slice(0, i).reduce((n, l) => n + Buffer.byteLength(l) + 1, 0))
  await pg.db.query('DELETE FROM goalkeeper_session_records WHERE session_id = $1', [pg.id])
  await pg.db.query(`INSERT INTO goalkeeper_session_records (session_id, seq, byte_offset, line) SELECT $1, r.seq - 1, r.o, r.l FROM unnest($2::bigint[], $3::text[]) WITH ORDINALITY AS r (o, l, seq)`, [pg.id, offsets, lines])
}

/** Removes the seal the store keeps for the log (the file beside it, or the session row's column). */
export async function removeSeal(file: string): Promise<void> {
  const pg = pgLocation(file)
  if (!pg) return fs.unlink(`${file}.seal`)
  await pg.db.query('UPDATE goalkeeper_sessions SET seal = NULL WHERE id = $1', [pg.id])
}

/** The log's checkpoint index as the store keeps it (the file beside it, or the session row's column). */
export async function readCheckpointIndex(file: string): Promise<string | undefined> {
  const pg = pgLocation(file)
  if (!pg) return fs.readFile(`${file}.checkpoint`, 'utf8').catch(() => undefined)
  const { rows } = await pg.db.query('SELECT checkpoint_index FROM goalkeeper_sessions WHERE id = $1', [pg.id])
  return rows[0]?.checkpoint_index ?? undefined
}

/** Replaces the log's checkpoint index as someone with access to the store would. */
export async function writeCheckpointIndex(file: string, text: string): Promise<void> {
  const pg = pgLocation(file)
  if (!pg) return fs.writeFile(`${file}.checkpoint`, text)
  await pg.db.query('UPDATE goalkeeper_sessions SET checkpoint_index = $2 WHERE id = $1', [pg.id, text])
}

/** Bytes of the log as stored (the file's size, or the rows' lines with newlines). */
export async function logSize(file: string): Promise<number> {
  return Buffer.byteLength(await readLog(file))
}

export async function readLines(file: string): Promise<any[]> {
  const text = await readLog(file)
  expect(text.endsWith('\n')).toBe(true)
  // Records as the service holds them: the mac is the file's business (integrity.test.ts checks it).
  return text.slice(0, -1).split('\n').map((line) => {
    const { mac, batch, ...record } = JSON.parse(line)
    return record
  })
}

/**
 * The index of the line that carries the mac over line `index` of a log's lines (split at newlines): the line
 * itself on version 1, the first line of its batch on version 2, where tampering is located.
 */
export function signingLine(lines: readonly string[], index: number): number {
  let at = index
  while (BATCHED && at > 0 && !/,"mac":"[0-9a-f]{64}"\}$/.test(lines[at])) at--
  return at
}

/**
 * Writes a session file by hand, one JSON value per line, for crash and corruption scenarios: signed
 * with the tests' key (as goalkeeper would have written them, without a seal), or `unsigned` (a log
 * from before signing). `seq` numbers the lines unless a record gives its own. Of `LOG_VERSION`: on
 * version 2 the header is a batch of its own and the records one batch, as one flush writes them.
 */
export async function writeSession(dir: string, id: string, records: { type: string; data: unknown; seq?: number }[], tail = '', options: { unsigned?: boolean } = {}): Promise<string> {
  const file = path.join(dir, `${id}.jsonl`)
  const batched = BATCHED && !options.unsigned
  const header = { type: 'session/header', data: { version: batched ? 2 : 1, id, createdAt: 1000, cwd: '/work' } }
  let lines = [header, ...records].map((r, seq) => JSON.stringify({ seq: 'seq' in r ? r.seq : seq, at: 1000 + seq, type: r.type, data: r.data }))
  if (batched) {
    const key = new Signer(await loadKey(TEST_KEY))
    const signer = new BatchSigner(key, key.seed(id))
    lines = [...signer.sign(lines.slice(0, 1), 0, 0), ...(lines.length > 1 ? signer.sign(lines.slice(1), 1, 0) : [])]
  } else if (!options.unsigned) {
    const signer = new Signer(await loadKey(TEST_KEY))
    let mac = signer.seed(id)
    lines = lines.map((line) => {
      const signed = signer.sign(mac, line)
      mac = signed.mac
      return signed.line
    })
  }
  if (STORE === 'postgres') {
    // A database log is never torn: a test with a torn tail is a file test.
    if (tail) throw new Error('writeSession: a torn tail only exists in files')
    const db = await databaseFor(dir)
    const offsets = lines.map((_, i) => lines.slice(0, i).reduce((n, l) => n + Buffer.byteLength(l) + 1, 0))
    const bytes = lines.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0)
    await db.query(`INSERT INTO goalkeeper_sessions (id, created_at, updated_at, records, bytes, cwd) VALUES ($1, 1000, $2, $3, $4, '/work')`, [id, 1000 + lines.length - 1, lines.length, bytes])
    await db.query(`INSERT INTO goalkeeper_session_records (session_id, seq, byte_offset, line) SELECT $1, r.seq - 1, r.o, r.l FROM unnest($2::bigint[], $3::text[]) WITH ORDINALITY AS r (o, l, seq)`, [id, offsets, lines])
    return `${(await import('@goalkeeper/session-postgres')).maskUrl(db.url)}#${id}`
  }
  await fs.writeFile(file, lines.map((l) => `${l}\n`).join('') + tail)
  return file
}

export function human(id: string, text: string): UserMessage {
  return { id, content: [{ type: 'text', text }], source: { kind: 'human' } }
}
