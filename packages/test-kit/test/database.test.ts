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

  it('keeps the server URL out of the environment, where maskers would take it for a secret', () => {
    expect(serverUrl()).toMatch(/^postgres:\/\//)
    // DATABASE_URL, when the run was given one, is the user's own.
    expect(Object.entries(process.env).filter(([name]) => name !== 'DATABASE_URL').map(([, value]) => value)).not.toContain(serverUrl())
  })
})

