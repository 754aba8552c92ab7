// Set-up when the database drops connections: a connection that dies while it holds the set-up lock in a
// transaction rejects its query without ending the process and frees the lock for the next starter; a
// lost connection is retried, a mistake is not, and a database that never answered is reported at once.
import pg from 'pg'
import { afterEach, expect, it } from 'vitest'
import { testDatabase } from '@goalkeeper/test-kit'
import { guardConnections, isConnectionLoss, openPostgresStore, underSetupLock, withRetry } from '../src/index.ts'

const db = testDatabase()
const pools: pg.Pool[] = []
afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.end()))
})

it('a connection terminated mid-transaction under the set-up lock rejects that work only; the lock is free for the next', async () => {
  const pool = guardConnections(new pg.Pool({ connectionString: db.url, max: 2 }))
  pools.push(pool)
  const control = new pg.Client({ connectionString: db.url })
  await control.connect()
  try {
    const lost = underSetupLock(pool, async (client) => {
      await client.query('BEGIN')
      await client.query('CREATE TABLE setup_probe (n int)')
      const { rows } = await client.query('SELECT pg_backend_pid() AS pid')
      await control.query('SELECT pg_terminate_backend($1)', [rows[0].pid])
      await client.query('COMMIT')
    })
    const error = await lost.then(() => undefined, (caught: unknown) => caught)
    expect(isConnectionLoss(error), String(error)).toBe(true)
    // The dead connection's lock went with it, and its transaction was rolled back.
    expect(await underSetupLock(pool, async (client) => (await client.query("SELECT to_regclass('setup_probe') AS t")).rows[0].t)).toBeNull()
  } finally {
    await control.end()
  }
})

it('withRetry tries a lost connection again with growing waits, and throws any other error at once', async () => {
  const lost = Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' })
  const tries: number[] = []
  expect(await withRetry(async (attempt) => {
    tries.push(attempt)
    if (attempt < 3) throw lost
    return 'ok'
  }, { firstDelayMs: 1 })).toBe('ok')
  expect(tries).toEqual([1, 2, 3])
  let mistakes = 0
  await expect(withRetry(async () => {
    mistakes++
    throw Object.assign(new Error('syntax error'), { code: '42601' })
  }, { firstDelayMs: 1 })).rejects.toThrow('syntax error')
  expect(mistakes).toBe(1)
  let given = 0
  await expect(withRetry(async () => {
    given++
    throw lost
  }, { attempts: 3, firstDelayMs: 1 })).rejects.toBe(lost)
  expect(given).toBe(3)
})

it('a database that never answered fails the store at once; no retry', async () => {
  const retries: unknown[] = []
  await expect(openPostgresStore('postgres://gk@127.0.0.1:1/nowhere', { onRetry: (error) => retries.push(error) }))
    .rejects.toThrow(/^database postgres:\/\/gk@127\.0\.0\.1:1\/nowhere: cannot connect to it: .*ECONNREFUSED/)
  expect(retries).toEqual([])
})
