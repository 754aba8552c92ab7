import type { Context } from 'cordis'
import type { Agent } from '@goalkeeper/agent-loop'
import { type Goal, type GoalBudgets, type GoalRef } from '@goalkeeper/goal'
import type { Approvals } from './approvals.ts'
import { ControlError, type ControlRequest, type ControlStatus } from './protocol.ts'
import { CONTROL_RECORD, type ControlRecord } from './records.ts'

type Mutation = Extract<ControlRequest, { action: 'pause' | 'resume' | 'clear' | 'raise' }>

function refOf(goal: Goal | undefined, request: Mutation): GoalRef {
  if (!goal) throw new ControlError('CONTROL_NO_GOAL', `session ${request.session} has no goal to ${request.action}`)
  return { id: goal.id, revision: request.revision ?? goal.revision }
}

/** Only raises: a budget or cap below the goal's would be a different decision than the control offers. */
function raised(goal: Goal, budgets: GoalBudgets | undefined, maxRounds: number | undefined) {
  if (maxRounds !== undefined && maxRounds <= goal.maxGoalRounds) throw new ControlError('CONTROL_NOT_RAISED', `max rounds ${maxRounds} does not raise the goal's ${goal.maxGoalRounds}`)
  for (const [key, amount] of Object.entries(budgets ?? {}) as [keyof GoalBudgets, number][]) {
    const current = goal.budgets?.[key]
    if (current !== undefined && amount <= current) throw new ControlError('CONTROL_NOT_RAISED', `budget ${key} ${amount} does not raise the goal's ${current}`)
  }
}

function mutate(ctx: Context, agent: Agent, request: Mutation): Pick<ControlRecord, 'revision' | 'budgets' | 'maxRounds'> {
  const goal = ctx.goals.get(agent)
  const ref = refOf(goal, request)
  switch (request.action) {
    case 'pause':
      return { revision: ctx.goals.pause(agent, ref).revision }
    case 'resume':
      return { revision: ctx.goals.resume(agent, ref).revision }
    case 'clear':
      ctx.goals.clear(agent, ref)
      return {}
    case 'raise': {
      const { budgets, maxRounds } = request
      raised(goal!, budgets, maxRounds)
      const edited = ctx.goals.edit(agent, ref, { ...(budgets ? { budgets } : {}), ...(maxRounds ? { maxGoalRounds: maxRounds } : {}) })
      return { revision: edited.revision, ...(budgets ? { budgets } : {}), ...(maxRounds ? { maxRounds } : {}) }
    }
  }
}

export function statusOf(ctx: Context, agent: Agent, approvals: Approvals, answersApprovals: boolean): ControlStatus {
  const goal = ctx.goals.get(agent)
  // Activation is process-local and never leaves the process; the goal as recorded does.
  const recorded = goal ? (({ activation: _activation, ...rest }) => rest)(goal) : null
  return { pid: process.pid, goal: recorded, answersApprovals, approvals: approvals.of(agent.id) }
}

/**
 * Applies one request to the live agent of its session, through the goal service and the permission
 * question it waits on, and records it (`control/applied`, with its source) after the change it made.
 */
export function applyControl(ctx: Context, approvals: Approvals, request: ControlRequest, answersApprovals: boolean): ControlStatus {
  const agent = ctx.agents.get(request.session)
  if (!agent) throw new ControlError('CONTROL_NOT_LIVE', `session ${request.session} is not open in this process (pid ${process.pid}) any more`)
  if (request.action === 'answer') {
    approvals.answer(agent.id, request.callId, request.allow, request.source)
    agent.session.append(CONTROL_RECORD, { action: 'answer', source: request.source, callId: request.callId, answer: request.allow ? 'allow' : 'deny' })
  } else if (request.action !== 'status') {
    const made = mutate(ctx, agent, request)
    agent.session.append(CONTROL_RECORD, { action: request.action, source: request.source, ...made })
  }
  return statusOf(ctx, agent, approvals, answersApprovals)
}
