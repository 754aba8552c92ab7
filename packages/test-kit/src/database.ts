// Each test file gets its own fresh database on the run's server (see database-setup.ts), so files
// running in parallel never see each other's rows. Created in beforeAll, dropped in afterAll.
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { afterAll, beforeAll, inject } from 'vitest'

export interface TestDatabase {
  /** URL of this database; for `testDatabase()` read it inside tests or hooks (it is set in beforeAll). */
  readonly url: string
  /** Database name, e.g. for a second connection or a raw query. */
  readonly name: string
  /** One pooled query on this database. */
  query<R extends pg.QueryResultRow = any>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>
}

export interface OwnedDatabase extends TestDatabase {
  /** Closes its connections and drops it (even with clients of a failed test still connected). */
  drop(): Promise<void>
}

/** URL of the run's server (the maintenance database); test files normally use `testDatabase()`. */
export const serverUrl = (): string => {
  const url = inject('databaseUrl')
  if (!url) throw new Error('no test database: vitest.config.ts must register packages/test-kit/src/database-setup.ts as globalSetup')
  return url
}

export const withDatabase = (url: string, name: string) => {
  const parsed = new URL(url)
  parsed.pathname = `/${name}`
  return parsed.toString()
}

async function onServer(text: string) {
  const admin = new pg.Client({ connectionString: serverUrl() })
  await admin.connect()
  try {
    await admin.query(text)
  } finally {
    await admin.end()
  }
}

/** A new empty database with a random name; the caller drops it. */
export async function createTestDatabase(): Promise<OwnedDatabase> {
  const name = `gk_test_${randomBytes(6).toString('hex')}`
  await onServer(`CREATE DATABASE ${name}`)
  const url = withDatabase(serverUrl(), name)
  let pool: pg.Pool | undefined
  return {
    url,
    name,
    query(text, values) {
      pool ??= new pg.Pool({ connectionString: url, max: 2 }).on('error', () => {})
      return pool.query(text, values as any[])
    },
    async drop() {
      await pool?.end()
      // FORCE: a test that failed may leave a connection open; the database still goes.
      await onServer(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    },
  }
}

/** This test file's own database: created in beforeAll, dropped in afterAll. */
export const testDatabase = (): TestDatabase => {
  let db: OwnedDatabase | undefined
  beforeAll(async () => {
    db = await createTestDatabase()
  })
  afterAll(() => db?.drop())
  const current = () => {
    if (!db) throw new Error('testDatabase() is only usable once beforeAll has run')
    return db
  }
  return {
    get url() {
      return current().url
    },
    get name() {
      return current().name
    },
    query: (text, values) => current().query(text, values),
  }
}
