import PgBoss from 'pg-boss'
import pg from 'pg'
import { guardConnections, isConnectionLoss, underSetupLock, withRetry } from '@goalkeeper/session-postgres'
import { type ControlReply, type ControlRequest, ControlUnavailable } from '@goalkeeper/control'
import type { Config } from './config.ts'
import { CONTROL_TABLE_SQL, type FleetControlOptions, FleetControls, sendFleetControl } from './control.ts'
import { type FleetKey, queryFleetKey } from './fleet-key.ts'
import { FleetError, type GoalJob, type GoalSpec, makeJob, readJob } from './job.ts'

/** What a listing shows of one goal: pg-boss's job state, with the worker and progress goalkeeper keeps beside it. */
export interface QueuedGoal {
  id: string
  /** `paused`: a control paused the goal and its worker ended the job so (pg-boss `cancelled`); a resume queues it again. */
  state: 'queued' | 'running' | 'paused' | 'done' | 'failed' | 'cancelled'
  /** pg-boss's own state name (created, retry, active, completed, failed, cancelled). */
  jobState: string
  objective: string
  sessionId: string
  repo: string
  ref: string
  worker: string | null
  /** The job runs, but its worker's beat stopped more than `lostSeconds` ago: it is released at the next sweep of a live worker. */
  workerLost: boolean
  rounds: number | null
  phase: string | null
  attempts: number
  createdAt: string
  /** Why a failed job failed, or the result of a finished one. */
  output: unknown
}

export interface FetchedJob {
  id: string
  job: GoalJob
  /** 0 on the first run; each expiry, failure or return adds one (pg-boss's retry count). */
  attempt: number
}

const STATE: Record<string, QueuedGoal['state']> = {
  created: 'queued', retry: 'queued', active: 'running', completed: 'done', failed: 'failed', cancelled: 'cancelled',
}

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`

/**
 * The goal queue: pg-boss 10 on the sessions' database. pg-boss owns job state, retries and expiry; the
 * queue adds a heartbeat (pg-boss 10 has none: a running job's `started_on` is renewed, so expiry
 * measures silence, not run time), a `goalkeeper_fleet` table naming the worker and progress of each job,
 * and a `goalkeeper_fleet_workers` table of each worker's last beat, by which lost workers' jobs are released.
 */
export class GoalQueue {
  private pgBoss: PgBoss
  private pool: pg.Pool
  private started?: Promise<void>

  constructor(private config: Config, private url: string, private options: { supervise?: boolean } = {}) {
    if (!url) throw new FleetError('NO_DATABASE', 'the goal queue needs a PostgreSQL URL', 'pass --database URL or set DATABASE_URL')
    this.pgBoss = this.newBoss()
    // Every connection has an error listener: a connection the server drops, idle or busy, must not end the process.
    this.pool = guardConnections(new pg.Pool({ connectionString: url, max: 2 }), (error) => this.onError?.(error))
  }

  /** pg-boss on the queue's database (a new instance after a start that lost its connection). */
  get boss(): PgBoss {
    return this.pgBoss
  }

  private newBoss(): PgBoss {
    const boss = new PgBoss({
      connectionString: this.url,
      schema: this.config.schema,
      max: 4,
      supervise: !!this.options.supervise,
      schedule: false,
      maintenanceIntervalSeconds: this.config.maintenanceSeconds,
      // Finished jobs stay listable in the job table for a week, then pg-boss archives them.
      archiveCompletedAfterSeconds: 7 * 24 * 3600,
    })
    // pg-boss reports connection trouble as events; without a listener an EventEmitter error would end the process.
    boss.on('error', (error) => this.onError?.(error))
    return boss
  }

  onError?: (error: Error) => void

  /**
   * Creates pg-boss's schema, the queue and the fleet's table when missing, under goalkeeper's set-up lock
   * (starters on a fresh database at once would collide in the catalogue), and starts pg-boss. A connection
   * lost on the way is tried again with backoff; pg-boss cannot start twice, so a retry starts a new one.
   */
  start(): Promise<void> {
    let connected = false
    return (this.started ??= withRetry(async (attempt) => {
      if (attempt > 1) {
        await this.pgBoss.stop({ graceful: false, wait: true, close: true }).catch(() => {})
        this.pgBoss = this.newBoss()
      }
      await underSetupLock(this.pool, async (client) => {
        connected = true
        await this.pgBoss.start()
        await this.pgBoss.createQueue(this.config.queue, {
          name: this.config.queue,
          retryLimit: this.config.retryLimit,
          retryDelay: this.config.retryDelaySeconds,
          expireInSeconds: this.config.expireSeconds,
        } as PgBoss.Queue)
        await client.query(`CREATE TABLE IF NOT EXISTS goalkeeper_fleet (
          job_id uuid PRIMARY KEY, session_id text NOT NULL, worker text, attempt int NOT NULL DEFAULT 0,
          rounds int, phase text, updated_at timestamptz NOT NULL DEFAULT now())`)
        await client.query(`CREATE TABLE IF NOT EXISTS goalkeeper_fleet_workers (
          worker text PRIMARY KEY, beat_at timestamptz NOT NULL DEFAULT now(), started_at timestamptz NOT NULL DEFAULT now())`)
        // One row: the id of the key the fleet's sessions are signed with (never the key), set by the first worker.
        await client.query(`CREATE TABLE IF NOT EXISTS goalkeeper_fleet_key (
          only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row), key_id text NOT NULL, source text NOT NULL,
          worker text NOT NULL, set_at timestamptz NOT NULL DEFAULT now())`)
        for (const statement of CONTROL_TABLE_SQL) await client.query(statement)
      })
    }, {
      // A database that never answered is told at once (a wrong URL, a server that is down); one lost after
      // it answered, or still starting up, is tried again.
      retryable: (error) => isConnectionLoss(error) && (connected || (error as { code?: unknown }).code === '57P03'),
      onRetry: (error) => this.onError?.(error as Error),
    }))
  }

  /**
   * The fleet's key: the one recorded in the database, or `key` (recorded now, with the worker that brought
   * it) when the fleet has none yet. A worker whose key differs must not take a job: everything it signed
   * would fail verification for the rest of the fleet.
   */
  async fleetKey(key: FleetKey): Promise<FleetKey> {
    await this.start()
    for (;;) {
      const { rows } = await withRetry(() => this.pool.query(
        `WITH added AS (INSERT INTO goalkeeper_fleet_key (key_id, source, worker) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING key_id, source, worker)
         SELECT key_id, source, worker FROM added UNION ALL SELECT key_id, source, worker FROM goalkeeper_fleet_key LIMIT 1`,
        [key.id, key.source, key.worker]))
      // None: another worker's first insert committed after this statement's snapshot; the next one sees it.
      if (rows[0]) return { id: rows[0].key_id, source: rows[0].source, worker: rows[0].worker }
    }
  }

  /** The fleet's key as recorded, or undefined before a worker recorded one; never records one. */
  async knownKey(): Promise<FleetKey | undefined> {
    await this.start()
    return withRetry(() => queryFleetKey(this.pool))
  }

  async submit(spec: GoalSpec): Promise<{ id: string; job: GoalJob }> {
    const job = makeJob(spec)
    await this.start()
    // The job carries the timings of the composition that submitted it, whoever created the queue.
    const id = await this.boss.send(this.config.queue, job as object, {
      retryLimit: this.config.retryLimit,
      retryDelay: this.config.retryDelaySeconds,
      expireInSeconds: this.config.expireSeconds,
    })
    if (!id) throw new FleetError('NOT_QUEUED', 'pg-boss did not queue the job')
    return { id, job }
  }

  /** Takes up to `count` jobs for this worker. Data that is not a goal fails its job at once with the reason. */
  async fetch(count: number): Promise<FetchedJob[]> {
    await this.start()
    const jobs = await this.boss.fetch<unknown>(this.config.queue, { batchSize: count, includeMetadata: true })
    const fetched: FetchedJob[] = []
    for (const item of jobs) {
      try {
        fetched.push({ id: item.id, job: readJob(item.data), attempt: item.retryCount })
      } catch (error) {
        await this.fail(item.id, error)
      }
    }
    return fetched
  }

  /**
   * Renews a running job; false when it is no longer this worker's (expired and retried, cancelled). With
   * `attempt` (the run's retry count), false too when the job runs again under a later attempt: pg-boss
   * retries a job under the same id, so the id alone cannot tell a run that lost its job from the one that
   * has it now.
   */
  async heartbeat(id: string, attempt?: number): Promise<boolean> {
    const ours = attempt === undefined ? '' : ' AND retry_count = $3'
    const result = await this.pool.query(
      `UPDATE ${ident(this.config.schema)}.job SET started_on = now() WHERE name = $1 AND id = $2 AND state = 'active'${ours}`,
      attempt === undefined ? [this.config.queue, id] : [this.config.queue, id, attempt],
    )
    return result.rowCount === 1
  }

  /**
   * Whether run `attempt` of a job still has it, renewing it (so it cannot expire for `expireSeconds`):
   * what a run checks before it settles the job, tried again while the connection is lost.
   */
  private async stillOurs(id: string, attempt: number | undefined): Promise<boolean> {
    return attempt === undefined || (await this.retrying(() => this.heartbeat(id, attempt)))
  }

  /** The worker's own beat: its row in `goalkeeper_fleet_workers`, stamped with the database's clock. */
  async beat(worker: string): Promise<void> {
    await this.start()
    await this.pool.query(
      `INSERT INTO goalkeeper_fleet_workers (worker) VALUES ($1) ON CONFLICT (worker) DO UPDATE SET beat_at = now()`,
      [worker],
    )
  }

  /** A worker that stopped cleanly leaves no row behind (it is not lost, it is gone). */
  async forgetWorker(worker: string): Promise<void> {
    await this.pool.query(`DELETE FROM goalkeeper_fleet_workers WHERE worker = $1`, [worker])
  }

  /**
   * Gives back the running jobs of lost workers: a job whose worker's beat and whose own renewal both
   * stopped more than `lostSeconds` ago is failed with a retry (pg-boss's own fail), so another worker
   * takes it without waiting for pg-boss's expiry. Resolves to the jobs released and their workers.
   */
  async releaseLost(lostSeconds: number): Promise<{ job: string; worker: string }[]> {
    const schema = ident(this.config.schema)
    // Unhooking the job from its worker in the same statement makes each release happen once, whichever
    // worker's sweep gets the row first; a job fetched since (fresh started_on) is never touched.
    const { rows } = await this.pool.query(
      `UPDATE goalkeeper_fleet f SET worker = NULL, updated_at = now()
       FROM goalkeeper_fleet_workers w, ${schema}.job j
       WHERE f.worker = w.worker AND w.beat_at < now() - $2 * interval '1 second'
         AND j.id = f.job_id AND j.name = $1 AND j.state = 'active' AND j.started_on < now() - $2 * interval '1 second'
       RETURNING f.job_id, w.worker`,
      [this.config.queue, lostSeconds],
    )
    for (const row of rows) {
      await this.boss.fail(this.config.queue, row.job_id, { message: `worker ${row.worker} was lost (no beat for ${lostSeconds} s)`, code: 'WORKER_LOST' })
    }
    return rows.map((row) => ({ job: row.job_id, worker: row.worker }))
  }

  /** Completes the job; with `attempt`, only while that run still has it (false: it was lost, nothing done). */
  async complete(id: string, output: object, attempt?: number): Promise<boolean> {
    if (!(await this.stillOurs(id, attempt))) return false
    await this.retrying(() => this.boss.complete(this.config.queue, id, output))
    return true
  }

  /**
   * A write that settles a job, tried again with backoff while the database is away (a restart, a dropped
   * connection): each is idempotent, and giving up would leave the job to expire and run again.
   */
  private retrying<T>(work: () => Promise<T>): Promise<T> {
    return withRetry(work, { attempts: 10, onRetry: (error) => this.onError?.(error as Error) })
  }

  /**
   * Fails the job for good (no retry): a job that cannot run (bad repository, bad data) fails with its reason.
   * With `attempt`, only while that run still has the job (false: it was lost, nothing done).
   */
  async fail(id: string, error: unknown, retry = false, attempt?: number): Promise<boolean> {
    if (!(await this.stillOurs(id, attempt))) return false
    const message = error instanceof Error ? error.message : String(error)
    const output = { message, ...((error as { code?: unknown })?.code ? { code: (error as { code: string }).code } : {}) }
    if (!retry) {
      // Raising retry_count to the limit makes pg-boss's fail final, through its own fail.
      await this.retrying(() => this.pool.query(`UPDATE ${ident(this.config.schema)}.job SET retry_count = retry_limit WHERE name = $1 AND id = $2`, [this.config.queue, id]))
    }
    await this.retrying(() => this.boss.fail(this.config.queue, id, output))
    return true
  }

  /** Puts a running job back in the queue as it is, for another worker (a draining worker's goals). */
  async release(id: string): Promise<void> {
    await this.retrying(() => this.boss.cancel(this.config.queue, id))
    await this.retrying(() => this.boss.resume(this.config.queue, id))
  }

  /** Ends a running job as paused (a control paused its goal): cancelled in pg-boss, until a resume queues it again. */
  async pauseJob(id: string): Promise<void> {
    await this.retrying(() => this.boss.cancel(this.config.queue, id))
  }

  /** A control for the fleet goal of `request.session`, through the database to the worker that runs it (control.ts). */
  async control(request: ControlRequest, options?: FleetControlOptions): Promise<ControlReply> {
    // A database no worker ever ran on gets no queue created by a control.
    const { rows } = await this.pool.query(`SELECT to_regclass('goalkeeper_fleet') IS NOT NULL AS fleet`)
    if (!rows[0].fleet) throw new ControlUnavailable('CONTROL_NOT_HELD', `no goalkeeper process on this machine has session ${request.session} open, and the database holds no fleet`)
    await this.start()
    return sendFleetControl(this.url, this.pool, this.boss, this.config, request, options)
  }

  /** The worker's side of those controls, on this queue's database. */
  controls(worker: string, log: (line: string) => void): FleetControls {
    return new FleetControls(this.url, this.pool, worker, log)
  }

  async noteClaim(id: string, sessionId: string, worker: string | null, attempt: number): Promise<void> {
    await this.retrying(() => this.pool.query(
      `INSERT INTO goalkeeper_fleet (job_id, session_id, worker, attempt, updated_at) VALUES ($1, $2, $3, $4, now())
       ON CONFLICT (job_id) DO UPDATE SET worker = $3, attempt = $4, updated_at = now()`,
      [id, sessionId, worker, attempt],
    ))
  }

  async noteProgress(id: string, progress: { rounds?: number; phase?: string; worker?: string | null }): Promise<void> {
    await this.pool.query(
      `UPDATE goalkeeper_fleet SET rounds = COALESCE($2, rounds), phase = COALESCE($3, phase),
         worker = CASE WHEN $4 THEN $5 ELSE worker END, updated_at = now() WHERE job_id = $1`,
      [id, progress.rounds ?? null, progress.phase ?? null, 'worker' in progress, progress.worker ?? null],
    )
  }

  /** Every goal of the queue, newest first (finished ones until pg-boss archives them, and from its archive). */
  async list(): Promise<QueuedGoal[]> {
    await this.start()
    const schema = ident(this.config.schema)
    const columns = 'id, state::text AS state, data, output, retry_count, created_on'
    const { rows } = await this.pool.query(
      `SELECT j.*, f.worker, f.rounds, f.phase, (w.beat_at < now() - $2 * interval '1 second') AS worker_lost FROM (
         SELECT ${columns} FROM ${schema}.job WHERE name = $1
         UNION ALL SELECT ${columns} FROM ${schema}.archive WHERE name = $1
       ) j LEFT JOIN goalkeeper_fleet f ON f.job_id = j.id LEFT JOIN goalkeeper_fleet_workers w ON w.worker = f.worker
       ORDER BY j.created_on DESC, j.id`,
      [this.config.queue, this.config.lostSeconds],
    )
    return rows.map((row) => {
      const data = (row.data ?? {}) as Partial<GoalJob>
      const state = row.state === 'cancelled' && row.phase === 'paused' ? 'paused' : STATE[row.state] ?? 'queued'
      return {
        id: row.id,
        state,
        jobState: row.state,
        objective: String(data.objective ?? ''),
        sessionId: String(data.sessionId ?? ''),
        repo: String(data.repo ?? ''),
        ref: String(data.ref ?? ''),
        // Only a running job has a worker now; a finished one keeps the last that ran it.
        worker: row.worker ?? null,
        workerLost: state === 'running' && row.worker_lost === true,
        rounds: row.rounds ?? null,
        phase: row.phase ?? null,
        attempts: Number(row.retry_count) + (state === 'queued' && row.state === 'created' && row.retry_count === 0 ? 0 : 1),
        createdAt: new Date(row.created_on).toISOString(),
        output: row.output ?? null,
      }
    })
  }

  /** The worker and progress goalkeeper noted for each session (for `sessions`). */
  async workersBySession(): Promise<Map<string, { worker: string | null; rounds: number | null; phase: string | null }>> {
    await this.start()
    const { rows } = await this.pool.query(`SELECT DISTINCT ON (session_id) session_id, worker, rounds, phase FROM goalkeeper_fleet ORDER BY session_id, updated_at DESC`)
    return new Map(rows.map((row) => [row.session_id, { worker: row.worker, rounds: row.rounds, phase: row.phase }]))
  }

  async stop(): Promise<void> {
    if (this.started) await this.started.catch(() => {})
    await this.pgBoss.stop({ graceful: false, wait: true, close: true }).catch(() => {})
    await this.pool.end().catch(() => {})
  }
}
