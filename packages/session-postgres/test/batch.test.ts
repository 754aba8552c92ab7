import { spawn } from 'node:child_process'
import { once } from 'node:events'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { expect, it } from 'vitest'
import { testDatabase } from '@goalkeeper/test-kit'
import { appsPerTest } from './helpers.ts'

const here = path.dirname(fileURLToPath(import.meta.url))
const repo = path.resolve(here, '../../..')
const BATCH = 4000
/** The killed writer's connections, by name (node-postgres reads PGAPPNAME). */
const APP = 'goalkeeper-batch-child'

const db = testDatabase()
const launch = appsPerTest()

it('a writer killed while its batches are in flight leaves only whole batches: a batch is one transaction', async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'fixtures/batch-child.ts'), db.url, String(BATCH)], { cwd: repo, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, PGAPPNAME: APP } })
  const exited = once(child, 'exit')
  let id: string | undefined
  for await (const line of createInterface({ input: child.stdout! })) {
    if (line.startsWith('session ')) id = line.slice('session '.length)
    // Batch 3's statement has just been sent: kill in the middle of it.
    if (line === 'writing 3') {
      child.kill('SIGKILL')
      break
    }
  }
  expect((await exited)[1]).toBe('SIGKILL')
  // The server finishes or rolls back what the dead writer had sent on its own time: end its backends and wait
  // until they are gone (PostgreSQL 14+), so the reads below see the batches as they stay.
  await db.query('SELECT pg_terminate_backend(pid, 60000) FROM pg_stat_activity WHERE application_name = $1', [APP])
  const { rows } = await db.query<{ batch: number; n: number }>(
    `SELECT (line::json -> 'data' ->> 'batch')::int AS batch, count(*)::int AS n FROM goalkeeper_session_records WHERE session_id = $1 AND seq > 0 GROUP BY 1 ORDER BY 1`,
    [id],
  )
  // Batches 0..2 were committed before "writing 3"; batch 3 is there whole or not at all.
  expect(rows.slice(0, 3)).toEqual([0, 1, 2].map((batch) => ({ batch, n: BATCH })))
  expect(rows.length === 3 || (rows.length === 4 && rows[3].n === BATCH)).toBe(true)
  // The summary row moved with the same transactions.
  const summary = await db.query('SELECT records FROM goalkeeper_sessions WHERE id = $1', [id])
  expect(summary.rows[0].records).toBe(1 + rows.length * BATCH)
  // The log replays strictly (seqs, signatures) and the next writer takes over at once (same host, dead pid).
  const app = await launch(db.url)
  const session = await app.sessions.open(id!)
  expect(session.records).toHaveLength(1 + rows.length * BATCH)
  expect(session.integrity).toMatchObject({ state: 'signed' })
})
