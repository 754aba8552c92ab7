import { isRecord } from '@goalkeeper/kit'
import type { Goal, GoalBudgets } from '@goalkeeper/goal'

/** Where a control came from, as its `control/applied` record says. */
export const CONTROL_SOURCES = ['board', 'cli'] as const
export type ControlSource = (typeof CONTROL_SOURCES)[number]

export const CONTROL_ACTIONS = ['status', 'pause', 'resume', 'raise', 'clear', 'answer'] as const
export type ControlAction = (typeof CONTROL_ACTIONS)[number]

/**
 * One request on the control socket (one JSON line). `revision`, when given, is the goal revision the person
 * saw: a goal changed since is refused (`GOAL_STALE_REVISION`) rather than acted on blindly.
 */
export type ControlRequest = { session: string; source: ControlSource } & (
  | { action: 'status' }
  | { action: 'pause' | 'resume' | 'clear'; revision?: number }
  /** Raises budgets and the round cap only: a lower value than the goal's is refused. */
  | { action: 'raise'; revision?: number; budgets?: GoalBudgets; maxRounds?: number }
  /** Answers a call waiting for a person (`allow`: once). */
  | { action: 'answer'; callId: string; allow: boolean }
)

/** A call waiting for a person in the owning process, as a controller shows it. */
export interface PendingApproval {
  callId: string
  tool: string
  why: string
  command?: string
  /** The call's arguments as JSON, cut to 2,000 characters. */
  arguments: string
  since: number
}

export interface ControlStatus {
  /** The process that applied the control (a fleet worker's, for a goal it runs). */
  pid: number
  /** The fleet worker running the goal, when the control went through the fleet's database. */
  worker?: string
  /**
   * A fleet goal no worker runs (pid 0, goal null): its job ended as `paused` (a resume puts it back in the
   * queue), or was just `requeued` by this resume.
   */
  fleetJob?: { id: string; state: 'paused' | 'requeued' }
  goal: Goal | null
  /** Whether this process takes permission questions for controllers (`approvals` of the plugin). */
  answersApprovals: boolean
  approvals: PendingApproval[]
}

export type ControlReply = { ok: true; status: ControlStatus } | { ok: false; code: string; message: string }

export class ControlError extends Error {
  constructor(readonly code: string, message: string) {
    super(message)
  }
}

const positive = (value: unknown) => typeof value === 'number' && Number.isFinite(value) && value > 0

function budgetsOf(value: unknown): GoalBudgets {
  if (!isRecord(value)) throw new ControlError('CONTROL_BAD_REQUEST', 'budgets must be an object of tokens, costUsd and activeTimeMs')
  const budgets: GoalBudgets = {}
  for (const [key, amount] of Object.entries(value)) {
    if (key !== 'tokens' && key !== 'costUsd' && key !== 'activeTimeMs') throw new ControlError('CONTROL_BAD_REQUEST', `unknown budget ${JSON.stringify(key)}: use tokens, costUsd or activeTimeMs`)
    if (!positive(amount) || (key !== 'costUsd' && !Number.isInteger(amount))) throw new ControlError('CONTROL_BAD_REQUEST', `budget ${key} must be a positive ${key === 'costUsd' ? 'number' : 'integer'}, not ${JSON.stringify(amount)}`)
    budgets[key] = amount as number
  }
  return budgets
}

/** Reads one request, naming what is wrong with it. */
export function parseRequest(value: unknown): ControlRequest {
  if (!isRecord(value)) throw new ControlError('CONTROL_BAD_REQUEST', 'a control request is a JSON object')
  const { session, source, action } = value
  if (typeof session !== 'string' || !session) throw new ControlError('CONTROL_BAD_REQUEST', 'session: the id of a session is required')
  if (!(CONTROL_SOURCES as readonly unknown[]).includes(source)) throw new ControlError('CONTROL_BAD_REQUEST', `source must be one of ${CONTROL_SOURCES.join(', ')}`)
  if (!(CONTROL_ACTIONS as readonly unknown[]).includes(action)) throw new ControlError('CONTROL_BAD_REQUEST', `action must be one of ${CONTROL_ACTIONS.join(', ')}, not ${JSON.stringify(action)}`)
  const base = { session, source: source as ControlSource }
  const revision = value.revision
  if (revision !== undefined && !Number.isInteger(revision)) throw new ControlError('CONTROL_BAD_REQUEST', 'revision must be an integer')
  const fenced = revision === undefined ? {} : { revision: revision as number }
  switch (action as ControlAction) {
    case 'status':
      return { ...base, action: 'status' }
    case 'answer':
      if (typeof value.callId !== 'string' || typeof value.allow !== 'boolean') throw new ControlError('CONTROL_BAD_REQUEST', 'answer needs callId (a string) and allow (true or false)')
      return { ...base, action: 'answer', callId: value.callId, allow: value.allow }
    case 'raise': {
      const maxRounds = value.maxRounds
      if (maxRounds !== undefined && (!Number.isInteger(maxRounds) || !positive(maxRounds))) throw new ControlError('CONTROL_BAD_REQUEST', 'maxRounds must be a positive integer')
      const budgets = value.budgets === undefined ? undefined : budgetsOf(value.budgets)
      if (!budgets && maxRounds === undefined) throw new ControlError('CONTROL_BAD_REQUEST', 'raise needs budgets, maxRounds or both')
      return { ...base, action: 'raise', ...fenced, ...(budgets ? { budgets } : {}), ...(maxRounds !== undefined ? { maxRounds: maxRounds as number } : {}) }
    }
    default:
      return { ...base, action: action as 'pause' | 'resume' | 'clear', ...fenced }
  }
}
