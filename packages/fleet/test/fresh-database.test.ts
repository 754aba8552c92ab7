// Commands started together on a database nobody has used: each sets up pg-boss's schema, the queue, the
// fleet's table and the session schema at once. Each try takes a new database, so every try is a first start.
import { expect, it } from 'vitest'
import { GoalQueue } from '@goalkeeper/fleet'
import { openPostgresStore } from '@goalkeeper/session-postgres'
import { createTestDatabase, stressRounds } from '@goalkeeper/test-kit'
import { FLEET } from './helpers.ts'
import { Config } from '../src/config.ts'

const COMMANDS = 8
const TRIES = stressRounds(4, 20)

it(`${COMMANDS} commands at once on a fresh database all start, ${TRIES} tries with a new database each`, async () => {
  const config = Config({ ...FLEET })
  for (let attempt = 0; attempt < TRIES; attempt++) {
    const db = await createTestDatabase()
    const queues: GoalQueue[] = []
    const stores: Awaited<ReturnType<typeof openPostgresStore>>[] = []
    try {
      // Each command has its own connections, as separate processes do.
      const started = await Promise.allSettled(Array.from({ length: COMMANDS }, async () => {
        const queue = new GoalQueue(config, db.url)
        queues.push(queue)
        const [store] = await Promise.all([openPostgresStore(db.url, { poolSize: 2 }), queue.start()])
        stores.push(store)
      }))
      const failed = started.flatMap((result) => (result.status === 'rejected' ? [String(result.reason?.message ?? result.reason)] : []))
      expect(failed, `try ${attempt + 1}`).toEqual([])
      // Every command works on what the others set up: one of them submits, all of them see it.
      await queues[0].submit({ objective: 'x', repo: 'file:///nowhere', ref: 'main' })
      for (const queue of queues) expect((await queue.list()).length).toBe(1)
      const { rows } = await db.query('SELECT count(*)::int AS n FROM goalkeeper_migrations')
      expect(rows[0].n).toBeGreaterThan(0)
    } finally {
      await Promise.all(queues.map((queue) => queue.stop()))
      await Promise.all(stores.map((store) => store.close()))
      await db.drop()
    }
  }
}, 240_000)

it('a database that never answered is reported at once, without retries (a wrong URL, a server that is down)', async () => {
  const queue = new GoalQueue(Config({ ...FLEET }), 'postgres://gk@127.0.0.1:1/nowhere')
  const retried: Error[] = []
  queue.onError = (error) => retried.push(error)
  try {
    await expect(queue.start()).rejects.toMatchObject({ code: 'ECONNREFUSED' })
    expect(retried).toEqual([])
  } finally {
    await queue.stop()
  }
})
