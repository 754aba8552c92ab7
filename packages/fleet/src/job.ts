import { randomBytes } from 'node:crypto'
import { normalizeCondition } from '@goalkeeper/goal'

/** Budgets as the goal takes them (`GoalBudgets` of @goalkeeper/goal). */
export interface JobBudgets {
  tokens?: number
  costUsd?: number
  activeTimeMs?: number
}

/** What `submit` puts in the queue: a standing instruction to pursue a goal in a repository. */
export interface GoalJob {
  version: 1
  /** Fixed at submit: every worker that runs the job works in this session. */
  sessionId: string
  objective: string
  repo: string
  ref: string
  maxRounds?: number
  budgets?: JobBudgets
  verify?: string[]
  /** A goal defined by a condition (`submit --until`): the worker creates it as `goal --until` does. */
  until?: string
  submittedAt: string
}

export type GoalSpec = Omit<GoalJob, 'version' | 'sessionId' | 'submittedAt'> & { sessionId?: string }

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567'

/** A session id in the session service's own format (`yyyymmdd-hhmmss-xxxxxx`), chosen before any worker runs. */
export function newSessionId(now = Date.now()): string {
  const stamp = new Date(now).toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15)
  const bytes = randomBytes(6)
  return `${stamp}-${[...bytes].map((byte) => BASE32[byte % 32]).join('')}`
}

export class FleetError extends Error {
  constructor(readonly code: string, message: string, readonly hint?: string) {
    super(message)
    this.name = 'FleetError'
  }
}

/** Checks a spec before it enters the queue: a job that can never run is refused at submit, not by a worker later. */
export function makeJob(spec: GoalSpec, now = Date.now()): GoalJob {
  const objective = spec.objective?.trim()
  if (!objective) throw new FleetError('BAD_JOB', 'the objective is empty', 'give what must be true when the goal is done')
  if (!spec.repo?.trim()) throw new FleetError('BAD_JOB', 'the job names no repository', 'pass --repo URL (a git URL, file:// URL or local path)')
  if (!spec.ref?.trim() || spec.ref.startsWith('-')) throw new FleetError('BAD_JOB', `--ref ${spec.ref}: not a git ref`, 'pass a branch or tag, e.g. --ref main')
  if (spec.repo.startsWith('-')) throw new FleetError('BAD_JOB', `--repo ${spec.repo}: not a repository`, 'pass a git URL, file:// URL or local path')
  return {
    version: 1,
    sessionId: spec.sessionId ?? newSessionId(now),
    objective,
    repo: spec.repo.trim(),
    ref: spec.ref.trim(),
    ...(spec.maxRounds !== undefined ? { maxRounds: spec.maxRounds } : {}),
    ...(spec.budgets && Object.keys(spec.budgets).length ? { budgets: spec.budgets } : {}),
    ...(spec.verify?.length ? { verify: spec.verify } : {}),
    ...(spec.until === undefined ? {} : { until: conditionOf(spec.until) }),
    submittedAt: new Date(now).toISOString(),
  }
}

/** The goal package's rule for a condition, refused at submit with its reason. */
function conditionOf(until: string): string {
  try {
    return normalizeCondition(until)
  } catch (error) {
    throw new FleetError('BAD_JOB', `--until: ${(error as Error).message}`, 'say when the goal is done, e.g. --until "npm test passes and README.md documents the flag"')
  }
}

/** A job read back from the queue: refuses data a different version (or something else) wrote. */
export function readJob(data: unknown): GoalJob {
  const job = data as Partial<GoalJob> | null
  if (!job || job.version !== 1 || typeof job.sessionId !== 'string' || typeof job.objective !== 'string' || typeof job.repo !== 'string' || typeof job.ref !== 'string') {
    throw new FleetError('BAD_JOB', 'the job data is not a goalkeeper goal (version 1)')
  }
  return job as GoalJob
}
