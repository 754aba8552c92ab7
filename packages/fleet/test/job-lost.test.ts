// A live worker whose job another worker took: the plugin says so with `fleet/job-lost` (the notifier's
// fleet.job_lost webhook), in process, on the real queue and a real repository.
import path from 'node:path'
import pg from 'pg'
import { Context } from 'cordis'
import { expect, it } from 'vitest'
import * as fleetPlugin from '@goalkeeper/fleet'
import type { FleetJobLost } from '@goalkeeper/fleet'
import { FLEET, useFleet } from './helpers.ts'

const fleet = useFleet()

it('a worker that finds its job taken over emits fleet/job-lost once, naming the job, session, worker and attempt', async () => {
  const repo = await fleet.repo('lost')
  const root = new Context()
  const fiber = await root.plugin(fleetPlugin, { ...FLEET, database: fleet.url, git: { root: path.join(fleet.dir, 'workspaces-lost') } })
  const pool = new pg.Pool({ connectionString: fleet.url })
  try {
    const { id, job } = await root.fleet.queue().submit({ objective: 'Write result.txt', repo, ref: 'main' })
    const heard: FleetJobLost[] = []
    const lost = new Promise<void>((resolve) => root.on('fleet/job-lost', (event) => void (heard.push(event), resolve())))
    const worker = root.fleet.worker({
      concurrency: 1,
      name: 'w-lost',
      // While the goal ran, its job stopped being this worker's (as when it expired and another took it).
      run: async (handle) => {
        await pool.query(`UPDATE pgboss.job SET state = 'completed' WHERE id = $1`, [handle.id])
        return { kind: 'returned' }
      },
    })
    await worker.start()
    await lost
    await worker.drain()
    expect(heard).toEqual([{ job: id, sessionId: job.sessionId, worker: 'w-lost', attempt: 0 }])
  } finally {
    await pool.end()
    await fiber.dispose()
  }
})

it('a run that lost its job to a later attempt of the same job can neither renew, fail nor complete it', async () => {
  const repo = await fleet.repo('attempts')
  const root = new Context()
  const fiber = await root.plugin(fleetPlugin, { ...FLEET, database: fleet.url, git: { root: path.join(fleet.dir, 'workspaces-attempts') } })
  const pool = new pg.Pool({ connectionString: fleet.url })
  const state = async (id: string) => (await pool.query(`SELECT state::text, retry_count FROM pgboss.job WHERE id = $1`, [id])).rows[0]
  try {
    const queue = root.fleet.queue()
    const { id } = await queue.submit({ objective: 'Write result.txt', repo, ref: 'main' })
    const [first] = await queue.fetch(1)
    expect(first).toMatchObject({ id, attempt: 0 })
    // The first run went silent; its job expired and was fetched again (pg-boss keeps the id, counts the retry).
    await pool.query(`UPDATE pgboss.job SET state = 'retry', start_after = now() WHERE id = $1`, [id])
    const [second] = await queue.fetch(1)
    expect(second).toMatchObject({ id, attempt: 1 })

    expect(await queue.heartbeat(id, 0)).toBe(false)
    expect(await queue.fail(id, new Error('stale'), true, 0)).toBe(false)
    expect(await queue.fail(id, new Error('stale'), false, 0)).toBe(false)
    expect(await queue.complete(id, { phase: 'complete' }, 0)).toBe(false)
    expect(await state(id)).toEqual({ state: 'active', retry_count: 1 })
    expect(await queue.heartbeat(id, 1)).toBe(true)
    expect(await queue.complete(id, { phase: 'complete' }, 1)).toBe(true)
    expect(await state(id)).toEqual({ state: 'completed', retry_count: 1 })
  } finally {
    await pool.end()
    await fiber.dispose()
  }
})
