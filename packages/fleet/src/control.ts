import pg from 'pg'
import type PgBoss from 'pg-boss'
import { type ControlReply, type ControlRequest, type ControlStatus, ControlUnavailable, parseRequest } from '@goalkeeper/control'
import { describeError } from '@goalkeeper/kit'
import type { Config } from './config.ts'

/** A worker LISTENs here; a controller NOTIFYs it with the session id once its request row is in. */
export const CONTROL_CHANNEL = 'goalkeeper_control'
/** A worker NOTIFYs here with the request's id once its reply row is written. */
export const CONTROL_REPLY_CHANNEL = 'goalkeeper_control_reply'

/** Created with the fleet's other tables, under the set-up lock. */
export const CONTROL_TABLE_SQL = [
  `CREATE TABLE IF NOT EXISTS goalkeeper_control (
    id bigserial PRIMARY KEY, session_id text NOT NULL, action text NOT NULL, args jsonb NOT NULL DEFAULT '{}',
    source text NOT NULL, created_at timestamptz NOT NULL DEFAULT now(), taken_by text, taken_at timestamptz,
    answered_at timestamptz, reply jsonb)`,
  `CREATE INDEX IF NOT EXISTS goalkeeper_control_open ON goalkeeper_control (session_id) WHERE answered_at IS NULL`,
]

/** Applies one request to the goal a worker runs (the control plugin's `applyControl` on the goal's composition). */
export type ControlHandler = (request: ControlRequest) => ControlStatus

function replyOf(work: () => ControlStatus): ControlReply {
  try {
    return { ok: true, status: work() }
  } catch (error) {
    const code = typeof (error as { code?: unknown }).code === 'string' ? (error as { code: string }).code : 'CONTROL_FAILED'
    return { ok: false, code, message: error instanceof Error ? error.message : describeError(error) }
  }
}

/**
 * A worker's side of the controls that travel through the database: one LISTEN connection, and the
 * sessions of the goals this worker runs, each with the handler that applies a request to it. A request
 * row is taken once (`taken_by`), applied, and answered with its reply row and a NOTIFY. The worker's beat
 * sweeps too, for a notification lost with a connection.
 */
export class FleetControls {
  private handlers = new Map<string, ControlHandler>()
  private listener?: pg.Client
  private connecting?: Promise<void>
  private closed = false

  constructor(private url: string, private pool: pg.Pool, private worker: string, private log: (line: string) => void) {}

  /** LISTENs (again, after a lost connection), then takes what waits for the sessions this worker runs. */
  async sweep(): Promise<void> {
    await this.listen()
    // One query for every session this worker runs, none when it runs none.
    if (this.handlers.size) await this.take([...this.handlers.keys()])
  }

  private listen(): Promise<void> {
    if (this.listener || this.closed) return Promise.resolve()
    return (this.connecting ??= (async () => {
      const client = new pg.Client({ connectionString: this.url })
      const lost = () => {
        if (this.listener === client) this.listener = undefined
      }
      // A dropped connection must not end the worker: the next beat listens again.
      client.on('error', () => {
        lost()
        client.end().catch(() => {})
      })
      client.on('end', lost)
      client.on('notification', (message) => {
        const session = message.payload ?? ''
        if (this.handlers.has(session)) this.take([session]).catch((error) => this.log(`control for session ${session}: ${describeError(error)}`))
      })
      try {
        await client.connect()
        await client.query(`LISTEN ${CONTROL_CHANNEL}`)
      } catch (error) {
        await client.end().catch(() => {})
        throw error
      }
      if (this.closed) await client.end().catch(() => {})
      else this.listener = client
    })().finally(() => (this.connecting = undefined)))
  }

  /** Controls for `session` go to `handler` until the returned function is called. */
  register(session: string, handler: ControlHandler): () => void {
    this.handlers.set(session, handler)
    this.take([session]).catch((error) => this.log(`control for session ${session}: ${describeError(error)}`))
    return () => {
      if (this.handlers.get(session) === handler) this.handlers.delete(session)
    }
  }

  private async take(sessions: string[]): Promise<void> {
    const { rows } = await this.pool.query(
      `UPDATE goalkeeper_control SET taken_by = $2, taken_at = now() WHERE id IN (
         SELECT id FROM goalkeeper_control WHERE session_id = ANY($1) AND taken_by IS NULL AND answered_at IS NULL
         ORDER BY id FOR UPDATE SKIP LOCKED)
       RETURNING id, session_id, action, args, source`,
      [sessions, this.worker],
    )
    for (const row of rows.sort((a, b) => Number(a.id) - Number(b.id))) {
      const session: string = row.session_id
      const handler = this.handlers.get(session)
      const reply: ControlReply = handler
        ? replyOf(() => handler(parseRequest({ ...(row.args ?? {}), session, source: row.source, action: row.action })))
        : { ok: false, code: 'CONTROL_NOT_LIVE', message: `worker ${this.worker} stopped running session ${session}` }
      await this.pool.query(`UPDATE goalkeeper_control SET answered_at = now(), reply = $2 WHERE id = $1`, [row.id, JSON.stringify(reply)])
      await this.pool.query(`SELECT pg_notify($1, $2)`, [CONTROL_REPLY_CHANNEL, String(row.id)])
    }
  }

  async close(): Promise<void> {
    this.closed = true
    this.handlers.clear()
    await this.connecting?.catch(() => {})
    const client = this.listener
    this.listener = undefined
    await client?.end().catch(() => {})
  }
}

/** The latest job of a session in the queue, with what goalkeeper notes beside it. */
interface SessionJob {
  id: string
  state: string
  worker: string | null
  phase: string | null
  lostFor: number | null
}

async function jobOf(pool: pg.Pool, config: Config, session: string): Promise<SessionJob | undefined> {
  const schema = `"${config.schema.replace(/"/g, '""')}"`
  const { rows } = await pool.query(
    `SELECT j.id, j.state::text AS state, f.worker, f.phase,
       CASE WHEN w.beat_at < now() - $3 * interval '1 second' THEN extract(epoch FROM now() - w.beat_at) END AS lost_for
     FROM ${schema}.job j LEFT JOIN goalkeeper_fleet f ON f.job_id = j.id
       LEFT JOIN goalkeeper_fleet_workers w ON w.worker = f.worker
     WHERE j.name = $1 AND j.data->>'sessionId' = $2 ORDER BY j.created_on DESC LIMIT 1`,
    [config.queue, session, config.lostSeconds],
  )
  const row = rows[0]
  if (!row) return undefined
  const lostFor = row.lost_for === null ? null : Number(row.lost_for)
  return { id: row.id, state: row.state, worker: row.worker ?? null, phase: row.phase ?? null, lostFor }
}

export interface FleetControlOptions {
  /** Default 10 s: a worker that does not answer in that time is reported, not waited for. */
  timeoutMs?: number
}

/** A fleet goal no worker runs: its job paused by a control, or put back in the queue by a resume just now. */
const unheld = (id: string, state: 'paused' | 'requeued'): ControlStatus =>
  ({ pid: 0, goal: null, answersApprovals: false, approvals: [], fleetJob: { id, state } })

/** The answer for a goal no worker runs, from its job alone. */
function unavailable(session: string, job: SessionJob): ControlUnavailable | undefined {
  const goal = `the fleet goal of session ${session}`
  if (job.state === 'cancelled' && job.phase === 'paused') {
    return new ControlUnavailable('CONTROL_PAUSED', `${goal} is paused and no worker runs it (job ${job.id}): resume it to put it back in the queue`)
  }
  if (job.state === 'created' || job.state === 'retry') return new ControlUnavailable('CONTROL_QUEUED', `${goal} is queued (job ${job.id}): no worker runs it yet`)
  if (job.state !== 'active') {
    const ended = `${job.state}${job.phase ? `, ${job.phase}` : ''}`
    return new ControlUnavailable('CONTROL_FINISHED', `${goal} has ended (job ${job.id} ${ended}): no worker runs it`)
  }
  if (!job.worker) return new ControlUnavailable('CONTROL_GONE', `the worker that ran session ${session} is gone: its goal goes back to the queue`)
  if (job.lostFor !== null) {
    const silent = `stopped beating ${Math.round(job.lostFor)} s ago`
    return new ControlUnavailable('CONTROL_GONE', `the worker that ran session ${session} (${job.worker}) ${silent}: its goal goes back to the queue`)
  }
  return undefined
}

/**
 * Sends one control to the worker that runs the session's fleet goal, through the database (a request row
 * and a NOTIFY; the worker answers with the reply row and a NOTIFY), and resolves to its reply. A paused
 * fleet goal (its job ended as paused) is resumed by putting its job back in the queue. Throws
 * `ControlUnavailable` when no worker runs the goal: `CONTROL_NOT_HELD` (no fleet goal has the session),
 * `CONTROL_QUEUED`, `CONTROL_PAUSED`, `CONTROL_FINISHED` or `CONTROL_GONE` (its worker is lost, or did not
 * answer).
 */
export async function sendFleetControl(
  url: string, pool: pg.Pool, boss: PgBoss, config: Config, request: ControlRequest, options: FleetControlOptions = {},
): Promise<ControlReply> {
  const { session } = request
  const job = await jobOf(pool, config, session)
  if (!job) {
    throw new ControlUnavailable('CONTROL_NOT_HELD', `no goal of the fleet's queue has session ${session}, and no goalkeeper process on this machine has it open`)
  }
  if (job.state === 'cancelled' && job.phase === 'paused') {
    if (request.action === 'resume') {
      await boss.resume(config.queue, job.id)
      return { ok: true, status: unheld(job.id, 'requeued') }
    }
    if (request.action === 'status') return { ok: true, status: unheld(job.id, 'paused') }
  }
  const refused = unavailable(session, job)
  if (refused) throw refused
  return await roundTrip(url, pool, job.worker!, request, options.timeoutMs ?? 10_000)
}

async function roundTrip(url: string, pool: pg.Pool, worker: string, request: ControlRequest, timeoutMs: number): Promise<ControlReply> {
  const { session, source, action, ...args } = request
  const listener = new pg.Client({ connectionString: url })
  listener.on('error', () => {})
  await listener.connect()
  const replyOf = async (id: string) =>
    (await pool.query(`SELECT reply FROM goalkeeper_control WHERE id = $1 AND answered_at IS NOT NULL`, [id])).rows[0]?.reply as ControlReply | undefined
  try {
    // A NOTIFY that lands while the row is being read is remembered, not lost.
    let signalled = false
    let wake = () => void (signalled = true)
    listener.on('notification', () => wake())
    await listener.query(`LISTEN ${CONTROL_REPLY_CHANNEL}`)
    const { rows } = await pool.query(
      `INSERT INTO goalkeeper_control (session_id, action, args, source) VALUES ($1, $2, $3, $4) RETURNING id`,
      [session, action, JSON.stringify(args), source],
    )
    const id = String(rows[0].id)
    await pool.query(`SELECT pg_notify($1, $2)`, [CONTROL_CHANNEL, session])
    const deadline = Date.now() + timeoutMs
    for (;;) {
      signalled = false
      const reply = await replyOf(id)
      if (reply) return reply
      const left = deadline - Date.now()
      if (left <= 0) break
      if (signalled) continue
      // Until a reply's NOTIFY (any request's: the row says whether it is this one's) or the deadline.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left)
        wake = () => {
          clearTimeout(timer)
          resolve()
        }
      })
      wake = () => void (signalled = true)
    }
    // Not taken: withdrawn, so that a worker coming back later does not act on a control nobody waits for.
    const withdrawn = await pool.query(
      `UPDATE goalkeeper_control SET answered_at = now(), reply = $2 WHERE id = $1 AND answered_at IS NULL AND taken_by IS NULL`,
      [id, JSON.stringify({ ok: false, code: 'CONTROL_GONE', message: 'withdrawn: no worker answered in time' })],
    )
    // Taken and answered at the last moment: that answer stands.
    const late = withdrawn.rowCount ? undefined : await replyOf(id)
    if (late) return late
    throw new ControlUnavailable('CONTROL_GONE', `worker ${worker}, which runs session ${session}, did not answer within ${Math.round(timeoutMs / 1000)} s`)
  } finally {
    await listener.end().catch(() => {})
  }
}
