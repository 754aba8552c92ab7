import type { Context } from 'cordis'
import { dispatchIsolated } from '@goalkeeper/kit'
import { Config } from './config.ts'
import { FleetError } from './job.ts'
import { GoalQueue } from './queue.ts'
import { FleetWorker, type FleetJobLost, type WorkerOptions } from './worker.ts'

export { Config, GitConfig } from './config.ts'
export { branchName, GitWorkspace } from './git.ts'
export { FleetError, type GoalJob, type GoalSpec, type JobBudgets, makeJob, newSessionId, readJob } from './job.ts'
export { assertFleetKey, type FleetKey, type OwnKey, queryFleetKey, readFleetKey } from './fleet-key.ts'
export { type FetchedJob, GoalQueue, type QueuedGoal } from './queue.ts'
export { FLEET_RECORD_TYPES, type FleetRecordData } from './records.ts'
export { type RecordedWorkspace, recordedWorkspace, type Rewind, rewindNotice } from './rewind.ts'
export type { GoalApp, GoalRunnerOptions } from './goal-app.ts'
export { runGoal } from './goal-runner.ts'
export * as roundCommit from './round-commit.ts'
export { commitRound, type RoundCommitTarget } from './round-commit.ts'
export { CONTROL_CHANNEL, CONTROL_REPLY_CHANNEL, type ControlHandler, type FleetControlOptions, FleetControls, sendFleetControl } from './control.ts'
export { FleetWorker, type FleetJobLost, type GoalHandle, type GoalOutcome, isPermanent, type RunGoal, type StopReason, type WorkerOptions } from './worker.ts'

/** `ctx.fleet`: the goal queue and its workers, on the database the plugin (or the command) names. */
export interface FleetService {
  readonly config: Config
  /** The queue on `config.database`, else `fallbackUrl` (the command's --database or DATABASE_URL); started on first use. */
  queue(fallbackUrl?: string, options?: { supervise?: boolean }): GoalQueue
  /** A worker on that queue (it supervises: pg-boss's expiry runs in workers). Drained when the plugin stops. */
  worker(options: WorkerOptions, fallbackUrl?: string): FleetWorker
}

declare module 'cordis' {
  interface Context {
    /** The goal queue (pg-boss) and its workers (section 14). */
    fleet: FleetService
  }
  interface Events {
    /** A worker of `ctx.fleet` found that a job it ran is another worker's now (isolated). */
    'fleet/job-lost'(lost: FleetJobLost): void
  }
}

export const name = 'fleet'
export const inject: string[] = []

export const apply = (ctx: Context, config: Config) => {
  const queues: GoalQueue[] = []
  const workers: FleetWorker[] = []
  const logger = ctx.logger('fleet')
  const service: FleetService = {
    config,
    queue(fallbackUrl, options) {
      const url = config.database || fallbackUrl || ''
      if (!url) throw new FleetError('NO_DATABASE', 'the goal queue needs a PostgreSQL URL', 'pass --database URL, set DATABASE_URL, or give the fleet plugin a database')
      const queue = new GoalQueue(config, url, options)
      queue.onError = (error) => logger.warn('queue: %s', error.message)
      queues.push(queue)
      return queue
    },
    worker(options, fallbackUrl) {
      const onLost = (lost: FleetJobLost) => {
        options.onLost?.(lost)
        dispatchIsolated(ctx, 'fleet/job-lost', lost)
      }
      const worker = new FleetWorker(service.queue(fallbackUrl, { supervise: true }), config, { ...options, onLost })
      workers.push(worker)
      return worker
    },
  }
  ctx.effect(() => {
    const dispose = ctx.provide('fleet', service)
    // Drain first (running goals pause and go back), then close the connections.
    return async () => {
      dispose()
      await Promise.all(workers.map((worker) => worker.drain()))
      await Promise.all(queues.map((queue) => queue.stop()))
    }
  }, 'fleet')
}
