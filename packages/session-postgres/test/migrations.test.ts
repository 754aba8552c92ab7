import { afterEach, describe, expect, it } from 'vitest'
import pg from 'pg'
import { createTestDatabase, testDatabase } from '@goalkeeper/test-kit'
import { migrate, MIGRATIONS, openPostgresStore } from '../src/index.ts'

const db = testDatabase()
let pools: pg.Pool[] = []
const endPools = async () => {
  await Promise.all(pools.map((pool) => pool.end()))
  pools = []
}
// Before the databases are dropped (a forced drop would cut the pools' idle connections).
afterEach(endPools)
const pool = (url: string) => {
  const made = new pg.Pool({ connectionString: url, max: 2 })
  pools.push(made)
  return made
}

describe('versioned migrations', () => {
  it('applies every version once and records it; running again applies nothing', async () => {
    const shared = pool(db.url)
    expect(await migrate(shared)).toEqual(MIGRATIONS.map((m) => m.version))
    expect(await migrate(shared)).toEqual([])
    const { rows } = await db.query('SELECT version, name FROM goalkeeper_migrations ORDER BY version')
    expect(rows).toEqual(MIGRATIONS.map(({ version, name }) => ({ version, name })))
  })

  it('concurrent starters on a new database: each version is applied exactly once, and every starter gets a working store', async () => {
    const fresh = await createTestDatabase()
    try {
      const results = await Promise.all(Array.from({ length: 6 }, () => migrate(pool(fresh.url))))
      expect(results.flat()).toEqual(MIGRATIONS.map((m) => m.version))
      const stores = await Promise.all(Array.from({ length: 4 }, () => openPostgresStore(fresh.url)))
      expect(await Promise.all(stores.map((store) => store.list()))).toEqual(Array(4).fill([]))
      await Promise.all(stores.map((store) => store.close()))
    } finally {
      await endPools()
      await fresh.drop()
    }
  })

  it('refuses a schema newer than it knows, with what to do', async () => {
    const fresh = await createTestDatabase()
    try {
      await migrate(pool(fresh.url))
      await fresh.query(`INSERT INTO goalkeeper_migrations (version, name) VALUES (999, 'from the future')`)
      await expect(openPostgresStore(fresh.url)).rejects.toMatchObject({
        code: 'SESSION_DATABASE',
        message: expect.stringMatching(/cannot migrate the session schema: the database's session schema is version 999, newer than this goalkeeper knows \(\d+\): upgrade goalkeeper$/),
      })
    } finally {
      await endPools()
      await fresh.drop()
    }
  })
})
