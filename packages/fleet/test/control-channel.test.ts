// The database path of fleet controls on its own, on a real PostgreSQL: a request row and a NOTIFY, taken
// once by the worker that runs the session, answered by its reply row; what happens when a NOTIFY is lost
// or no worker answers, and the answers for a goal that no worker runs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type ControlStatus } from '@goalkeeper/control'
import { GoalQueue } from '@goalkeeper/fleet'
import { testDatabase } from '@goalkeeper/test-kit'
import { Config } from '../src/config.ts'
import { FLEET } from './helpers.ts'

const db = testDatabase()
let queue: GoalQueue

beforeAll(async () => {
  queue = new GoalQueue(Config({ ...FLEET }), db.url)
  await queue.start()
})
afterAll(() => queue?.stop())

const status: ControlStatus = { pid: process.pid, goal: null, answersApprovals: false, approvals: [] }

/** A job taken by `worker`, which beats: what a running fleet goal looks like in the database. */
async function running(worker: string) {
  const { job } = await queue.submit({ objective: 'x', repo: 'file:///nowhere', ref: 'main' })
  const [fetched] = await queue.fetch(1)
  expect(fetched.job.sessionId).toBe(job.sessionId)
  await queue.noteClaim(fetched.id, job.sessionId, worker, 0)
  await queue.beat(worker)
  return { id: fetched.id, session: job.sessionId }
}

const rowsOf = async (session: string) => (await db.query('SELECT action, taken_by, answered_at IS NOT NULL AS answered, reply FROM goalkeeper_control WHERE session_id = $1 ORDER BY id', [session])).rows

describe('fleet controls through the database', () => {
  it('a request is answered through NOTIFY; one whose NOTIFY was lost is taken at the next sweep; each is applied once', async () => {
    const { session } = await running('w-notify')
    const controls = queue.controls('w-notify', () => {})
    const seen: string[] = []
    controls.register(session, (request) => {
      seen.push(request.action)
      if (request.action === 'resume') throw Object.assign(new Error('The goal is active already.'), { code: 'GOAL_INVALID_TRANSITION' })
      return status
    })
    try {
      await controls.sweep()
      expect(await queue.control({ session, source: 'cli', action: 'pause' })).toEqual({ ok: true, status })
      expect(await queue.control({ session, source: 'board', action: 'resume' })).toEqual({ ok: false, code: 'GOAL_INVALID_TRANSITION', message: 'The goal is active already.' })
      // A row whose NOTIFY never came: nothing takes it until the sweep of the worker's beat.
      await db.query(`INSERT INTO goalkeeper_control (session_id, action, args, source) VALUES ($1, 'raise', '{"maxRounds": 9}', 'cli')`, [session])
      expect((await rowsOf(session)).at(-1)).toMatchObject({ action: 'raise', taken_by: null, answered: false })
      await controls.sweep()
      await controls.sweep()
      expect((await rowsOf(session)).at(-1)).toMatchObject({ action: 'raise', taken_by: 'w-notify', answered: true, reply: { ok: true } })
      expect(seen).toEqual(['pause', 'resume', 'raise'])
    } finally {
      await controls.close()
    }
  })

  it('a worker that does not answer: the controller says so after its timeout and withdraws the request, which a late sweep leaves alone', async () => {
    const { session } = await running('w-silent')
    await expect(queue.control({ session, source: 'cli', action: 'pause' }, { timeoutMs: 1000 })).rejects.toMatchObject({
      code: 'CONTROL_GONE', message: `worker w-silent, which runs session ${session}, did not answer within 1 s`,
    })
    expect(await rowsOf(session)).toMatchObject([{ action: 'pause', taken_by: null, answered: true, reply: { ok: false, code: 'CONTROL_GONE' } }])
    const controls = queue.controls('w-silent', () => {})
    const seen: string[] = []
    controls.register(session, (request) => (seen.push(request.action), status))
    try {
      await controls.sweep()
      expect(seen).toEqual([])
    } finally {
      await controls.close()
    }
  })

  it('a goal no worker runs gets a clear answer: not a fleet goal, queued', async () => {
    await expect(queue.control({ session: '20260101-000000-nofleet', source: 'cli', action: 'pause' })).rejects.toMatchObject({
      code: 'CONTROL_NOT_HELD', message: 'no goal of the fleet\'s queue has session 20260101-000000-nofleet, and no goalkeeper process on this machine has it open',
    })
    const { id, job } = await queue.submit({ objective: 'y', repo: 'file:///nowhere', ref: 'main' })
    await expect(queue.control({ session: job.sessionId, source: 'cli', action: 'pause' })).rejects.toMatchObject({
      code: 'CONTROL_QUEUED', message: `the fleet goal of session ${job.sessionId} is queued (job ${id}): no worker runs it yet`,
    })
  })
})
