import os from 'node:os'
import { describeError } from '@goalkeeper/kit'
import type { Config } from './config.ts'
import type { ControlHandler, FleetControls } from './control.ts'
import { assertFleetKey } from './fleet-key.ts'
import { GitWorkspace } from './git.ts'
import { FleetError, type GoalJob } from './job.ts'
import type { GoalQueue } from './queue.ts'

export type StopReason = 'drain' | 'lost'

/** One job as the worker hands it to whoever runs goals (the CLI's `worker` command). */
export interface GoalHandle {
  id: string
  job: GoalJob
  /** pg-boss's retry count: 0 on the first run. */
  attempt: number
  worker: string
  workspace: GitWorkspace
  /** Resolves when the goal must stop: `drain` (pause it cleanly; the job goes back to the queue) or `lost` (the job is no longer this worker's). */
  stopping: Promise<StopReason>
  /** Notes rounds and phase beside the job (what `queue` shows). */
  progress(progress: { rounds?: number; phase?: string }): void
  /** Takes the controls sent through the database for `session` (control.ts) until the returned function is called. */
  controls(session: string, handler: ControlHandler): () => void
}

export type GoalOutcome =
  | { kind: 'done'; output: { phase: string; rounds: number; [key: string]: unknown } }
  | { kind: 'returned'; output?: { phase: string; rounds: number } }
  /** A control paused the goal: the job ends as paused (cancelled) until a resume queues it again. */
  | { kind: 'paused'; output: { phase: string; rounds: number } }
  | { kind: 'lost' }

export type RunGoal = (handle: GoalHandle) => Promise<GoalOutcome>

export interface WorkerOptions {
  concurrency: number
  /** Worker name in records and listings (default host:pid). */
  name?: string
  run: RunGoal
  /**
   * The key this worker's goals sign with (`SessionService.signingKey`): checked against the fleet's before
   * the first job is taken, and recorded as the fleet's when the database has none.
   */
  key?: { id: string; source: string }
  /** One progress line (claimed, done, failed, returned). */
  log?: (line: string) => void
  /** The job stopped being this worker's: another worker took it over (the plugin's `fleet/job-lost`). */
  onLost?: (lost: FleetJobLost) => void
}

/** A job a worker lost while it ran it. */
export interface FleetJobLost {
  job: string
  sessionId: string
  worker: string
  attempt: number
}

/** An error a retry cannot fix: the job fails for good with it. */
export function isPermanent(error: unknown): boolean {
  return !!(error as { permanent?: unknown })?.permanent
}

/**
 * Runs up to `concurrency` goals of the queue at once until drained. Each running job is renewed every
 * heartbeat; a job that stops being this worker's (it expired and another worker took it) is stopped
 * without saving anything more.
 */
export class FleetWorker {
  readonly name: string
  private running = new Map<string, { stop: (reason: StopReason) => void; done: Promise<void> }>()
  private draining = false
  private wake?: () => void
  private loop?: Promise<void>
  private beating?: ReturnType<typeof setInterval>
  private beatUnderWay?: Promise<void>
  private controls?: FleetControls

  constructor(private queue: GoalQueue, private config: Config, private options: WorkerOptions) {
    this.name = options.name || `${os.hostname()}:${process.pid}`
  }

  /** Number of goals running now. */
  get size(): number {
    return this.running.size
  }

  /** Connects (creating pg-boss's schema and the queue when missing), then beats and takes jobs until drained. Rejects when the database cannot be used. */
  async start(): Promise<this> {
    await this.queue.start()
    if (this.options.key && !this.loop) await this.checkKey(this.options.key)
    if (!this.loop) {
      await this.queue.beat(this.name)
      this.controls = this.queue.controls(this.name, (line) => this.log(line))
      await this.controls.sweep().catch((error) => this.log(`controls: ${describeError(error)}`))
      this.beating = setInterval(() => void this.beat(), this.config.heartbeatSeconds * 1000)
      this.loop = this.poll()
    }
    return this
  }

  private async checkKey(key: { id: string; source: string }): Promise<void> {
    assertFleetKey('this worker signs with key', key, await this.queue.fleetKey({ ...key, worker: this.name }), 'no job taken')
  }

  /** One beat: this worker is alive; and any worker whose beat stopped `lostSeconds` ago has its jobs released. */
  private beat(): Promise<void> {
    this.beatUnderWay ??= this.beatOnce().finally(() => (this.beatUnderWay = undefined))
    return this.beatUnderWay
  }

  private async beatOnce(): Promise<void> {
    try {
      await this.queue.beat(this.name)
      await this.controls?.sweep().catch((error) => this.log(`controls: ${describeError(error)}`))
      for (const { job, worker } of await this.queue.releaseLost(this.config.lostSeconds)) {
        this.log(`goal ${job}: worker ${worker} stopped beating ${this.config.lostSeconds} s ago; released its job`)
        this.wake?.()
      }
    } catch (error) {
      this.log(`beat failed: ${describeError(error)}`)
    }
  }

  /** No new jobs; running goals are asked to pause and their jobs go back to the queue. Resolves once all are. */
  async drain(): Promise<void> {
    this.draining = true
    this.wake?.()
    for (const entry of this.running.values()) entry.stop('drain')
    await this.loop
    await Promise.all([...this.running.values()].map((entry) => entry.done))
    // Beating until every goal is given back: a drain that takes long must not look like a death.
    if (this.beating) {
      clearInterval(this.beating)
      this.beating = undefined
      await this.beatUnderWay
      await this.queue.forgetWorker(this.name).catch(() => {})
    }
    await this.controls?.close()
  }

  private log(line: string) {
    this.options.log?.(line)
  }

  private async poll(): Promise<void> {
    while (!this.draining) {
      const free = this.options.concurrency - this.running.size
      let fetched = 0
      if (free > 0) {
        try {
          const jobs = await this.queue.fetch(free)
          fetched = jobs.length
          for (const item of jobs) {
            // A drain that began during the fetch: the job goes straight back.
            if (this.draining) await this.queue.release(item.id).catch(() => {})
            else this.launch(item.id, item.job, item.attempt)
          }
        } catch (error) {
          this.log(`cannot fetch from the queue: ${describeError(error)}`)
        }
      }
      if (this.draining) break
      // A full batch may mean more are waiting: ask again at once while there are free slots.
      if (fetched > 0 && fetched === free) continue
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.config.pollMs)
        this.wake = () => {
          clearTimeout(timer)
          resolve()
        }
      })
      this.wake = undefined
    }
  }

  private launch(id: string, job: GoalJob, attempt: number) {
    let stop!: (reason: StopReason) => void
    const stopping = new Promise<StopReason>((resolve) => (stop = resolve))
    let stopped = false
    const stopOnce = (reason: StopReason) => {
      if (stopped) return
      stopped = true
      stop(reason)
    }
    const done = this.work(id, job, attempt, stopping, stopOnce).finally(() => {
      this.running.delete(id)
      this.wake?.()
    })
    this.running.set(id, { stop: stopOnce, done })
  }

  private lost(id: string, job: GoalJob, attempt: number) {
    this.log(`goal ${id} lost: another worker runs it now`)
    this.options.onLost?.({ job: id, sessionId: job.sessionId, worker: this.name, attempt })
  }

  private async work(id: string, job: GoalJob, attempt: number, stopping: Promise<StopReason>, stop: (reason: StopReason) => void): Promise<void> {
    const heartbeat = setInterval(() => {
      this.queue.heartbeat(id, attempt).then(
        (ours) => ours || stop('lost'),
        (error) => this.log(`goal ${id}: heartbeat failed: ${describeError(error)}`),
      )
    }, this.config.heartbeatSeconds * 1000)
    let workspace: GitWorkspace | undefined
    try {
      await this.queue.noteClaim(id, job.sessionId, this.name, attempt)
      this.log(`goal ${id} (session ${job.sessionId}) claimed${attempt ? `, attempt ${attempt + 1}` : ''}: ${job.repo} ${job.ref}`)
      try {
        workspace = await GitWorkspace.prepare(job, id, this.config.git)
      } catch (error) {
        this.log(`goal ${id} failed: ${describeError(error)}`)
        if (!(await this.queue.fail(id, error, false, attempt))) this.lost(id, job, attempt)
        return
      }
      const handle: GoalHandle = {
        id, job, attempt, worker: this.name, workspace, stopping,
        progress: (progress) => void this.queue.noteProgress(id, progress).catch(() => {}),
        controls: (session, handler) => this.controls?.register(session, handler) ?? (() => {}),
      }
      let outcome: GoalOutcome
      try {
        outcome = await this.options.run(handle)
      } catch (error) {
        const permanent = isPermanent(error)
        this.log(`goal ${id} failed${permanent ? '' : ' (it will be retried)'}: ${describeError(error)}`)
        await this.queue.noteProgress(id, { worker: null }).catch(() => {})
        // A run that lost its job leaves it to the run that has it now (pg-boss retries under the same id).
        if (!(await this.queue.fail(id, error, !permanent, attempt))) this.lost(id, job, attempt)
        return
      }
      await this.settle(id, outcome, job, attempt)
    } catch (error) {
      this.log(`goal ${id}: ${describeError(error)}`)
    } finally {
      clearInterval(heartbeat)
      await workspace?.dispose().catch(() => {})
    }
  }

  /** The job as the goal's run ended it: completed, back in the queue, or left to the worker that took it. */
  private async settle(id: string, outcome: GoalOutcome, job: GoalJob, attempt: number): Promise<void> {
    if (outcome.kind === 'done') {
      await this.queue.noteProgress(id, { rounds: outcome.output.rounds, phase: outcome.output.phase })
      if (!(await this.queue.complete(id, outcome.output, attempt))) return this.lost(id, job, attempt)
      const status = typeof outcome.output.status === 'string' ? `; ${outcome.output.status}` : ''
      this.log(`goal ${id} done: ${outcome.output.phase} after ${outcome.output.rounds} round${outcome.output.rounds === 1 ? '' : 's'}${status}`)
    } else if (outcome.kind === 'returned') {
      // Only a job still this worker's goes back: cancelling one another worker took over would stop that worker's run.
      if (!(await this.queue.heartbeat(id, attempt))) return this.lost(id, job, attempt)
      await this.queue.noteProgress(id, { ...(outcome.output ?? {}), worker: null })
      await this.queue.release(id)
      this.log(`goal ${id} returned to the queue`)
    } else if (outcome.kind === 'paused') {
      if (!(await this.queue.heartbeat(id))) return this.lost(id, job, attempt)
      await this.queue.noteProgress(id, { ...outcome.output, worker: null })
      await this.queue.pauseJob(id)
      this.log(`goal ${id} paused: its job waits for a resume`)
    } else {
      this.lost(id, job, attempt)
    }
  }
}
