import { describe, expect, it } from 'vitest'
import { serverUrl, testDatabase } from '../src/index.ts'

const db = testDatabase()
const other = testDatabase()

describe('testDatabase', () => {
  it('gives each caller its own empty database on the run server', async () => {
    expect(db.name).toMatch(/^gk_test_[0-9a-f]{12}$/)
    expect(db.name).not.toBe(other.name)
    const { rows } = await db.query('SELECT current_database() AS name')
    expect(rows[0].name).toBe(db.name)
    const tables = await db.query(`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'`)
    expect(tables.rows[0].n).toBe(0)
  })

  it('keeps rows of one database out of another', async () => {
    await db.query('CREATE TABLE t (v text)')
    await db.query(`INSERT INTO t VALUES ('mine')`)
    await expect(other.query('SELECT * FROM t')).rejects.toThrow(/does not exist/)
  })

  it('hands the server URL to child processes through the environment', () => {
    expect(process.env.GOALKEEPER_TEST_DATABASE_URL).toBe(serverUrl())
  })
})

