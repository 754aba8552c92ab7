import type { FleetJobLost } from '@goalkeeper/fleet'
import { BUDGET_BLOCK_CODE, type Goal, type GoalChange } from '@goalkeeper/goal'
import type { PermissionRequest } from '@goalkeeper/permissions'
import type { Session } from '@goalkeeper/session'

/** The part of an agent a webhook names. */
export interface AgentRef {
  readonly id: string
  readonly session: Session
}

/** The `type` of each webhook, Standard Webhooks style (`<noun>.<event>`). */
export const NOTIFY_EVENTS = ['goal.completed', 'goal.blocked', 'goal.paused', 'goal.budget_reached', 'approval.waiting', 'fleet.job_lost'] as const
export type NotifyEventType = (typeof NOTIFY_EVENTS)[number]

/** What a webhook says, before it is stamped with its id and time. */
export interface NotifyEvent {
  type: NotifyEventType
  data: Record<string, unknown>
}

/** Where the agent works, from its session header. */
const whereOf = (agent: AgentRef) => ({ session: agent.id, workspace: agent.session.header.cwd })

/** The goal as the webhook carries it: the persisted snapshot (never the process-local activation). */
function goalData(goal: Goal): Record<string, unknown> {
  const { id, objective, phase, revision, roundsStarted, maxGoalRounds, blockedReason, budgets, spent, verification, updatedAt } = goal
  return { id, objective, phase, revision, roundsStarted, maxGoalRounds, blockedReason, budgets, spent, verification, updatedAt }
}

/**
 * The webhook a goal change makes, if any: completion, pause and block, with a budget's block told apart
 * (`goal.budget_reached`, its code `budget-limited`) so that one transition is one event.
 */
export function goalEvent(agent: AgentRef, change: GoalChange): NotifyEvent | undefined {
  const goal = change.goal
  if (!goal) return undefined
  const type = change.op === 'complete' ? 'goal.completed'
    : change.op === 'pause' ? 'goal.paused'
    : change.op === 'block' ? (goal.blockedReason?.code === BUDGET_BLOCK_CODE ? 'goal.budget_reached' : 'goal.blocked')
    : undefined
  return type && { type, data: { ...whereOf(agent), goal: goalData(goal) } }
}

/** A tool call waits for a person's answer. The arguments stay out: only what the person is asked. */
export function approvalEvent(request: PermissionRequest): NotifyEvent {
  const { call } = request.review
  return {
    type: 'approval.waiting',
    data: {
      session: call.agent.id,
      workspace: call.cwd,
      tool: request.tool,
      why: request.why,
      ...(request.command !== undefined && { command: request.command }),
      mode: request.mode,
      turn: call.turn,
      callId: call.callId,
    },
  }
}

/** A fleet worker found that the job it ran is no longer its own (another worker took it over). */
export function jobLostEvent(lost: FleetJobLost): NotifyEvent {
  return { type: 'fleet.job_lost', data: { job: lost.job, session: lost.sessionId, worker: lost.worker, attempt: lost.attempt } }
}
