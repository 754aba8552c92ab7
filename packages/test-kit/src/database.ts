// Each test file gets its own fresh database on the run's server (see database-setup.ts), so files
// running in parallel never see each other's rows. Created in beforeAll, dropped in afterAll.
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { afterAll, beforeAll, inject } from 'vitest'

export interface TestDatabase {
  /** URL of this file's own database; read it inside tests or hooks (it is set in beforeAll). */
  readonly url: string
  /** Database name, e.g. for a second connection or a raw query. */
  readonly name: string
  /** One pooled query on this database. */
  query<R extends pg.QueryResultRow = any>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>
}

/** URL of the run's server (the maintenance database); test files normally use `testDatabase()`. */
export const serverUrl = (): string => {
  const url = inject('databaseUrl') ?? process.env.GOALKEEPER_TEST_DATABASE_URL
  if (!url) throw new Error('no test database: vitest.config.ts must register packages/test-kit/src/database-setup.ts as globalSetup')
  return url
}

export const withDatabase = (url: string, name: string) => {
  const parsed = new URL(url)
  parsed.pathname = `/${name}`
  return parsed.toString()
}

export const testDatabase = (): TestDatabase => {
  let name = ''
  let url = ''
  let pool: pg.Pool | undefined
  beforeAll(async () => {
    name = `gk_test_${randomBytes(6).toString('hex')}`
    const admin = new pg.Client({ connectionString: serverUrl() })
    await admin.connect()
    try {
      await admin.query(`CREATE DATABASE ${name}`)
    } finally {
      await admin.end()
    }
    url = withDatabase(serverUrl(), name)
  })
  afterAll(async () => {
    await pool?.end()
    if (!name) return
    const admin = new pg.Client({ connectionString: serverUrl() })
    await admin.connect()
    try {
      // FORCE: a test that failed may leave a connection open; the database still goes.
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    } finally {
      await admin.end()
    }
  })
  return {
    get url() {
      if (!url) throw new Error('testDatabase().url is only set once beforeAll has run')
      return url
    },
    get name() {
      return name
    },
    query(text, values) {
      pool ??= new pg.Pool({ connectionString: this.url, max: 2 })
      return pool.query(text, values as any[])
    },
  }
}
