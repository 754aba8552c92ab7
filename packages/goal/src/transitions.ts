import { clip } from '@goalkeeper/kit'
import { GoalError } from './errors.ts'
import { budgetsReached, describeBudget, normalizeBudgets } from './budgets.ts'
import { normalizeVerify } from './checks.ts'
import type { BlockedReason, Goal, GoalBudgets, GoalOperation, GoalPhase } from './types.ts'
import { checkMaxRounds, normalizeBlockReason, normalizeCondition, normalizeObjective } from './validate.ts'

export type MutatingOperation = Exclude<GoalOperation, 'clear'>

/** What a mutation supplies. The service passes caller input; the fold passes a record's snapshot. */
export interface TransitionArgs {
  /** Time of the mutation, already clamped so it never goes backwards. */
  now: number
  /** New goal id (create). */
  id?: string
  objective?: unknown
  maxGoalRounds?: unknown
  reason?: unknown
  /** create: the budgets; edit: budgets merged into the goal's. */
  budgets?: unknown
  /** create: the check commands (else `defaultVerify`); edit: the new list, [] removes the check. */
  verify?: unknown
  defaultVerify?: string[]
  /** create: the condition that completes the goal when the judge finds it met. */
  until?: unknown
  /** complete: who decided, when it was a person. */
  completedBy?: unknown
  /** Cap used by create when `maxGoalRounds` is absent. */
  defaultMaxGoalRounds?: number
}

/**
 * The single transition table of DESIGN.md section 7, shared by live mutations and replay, so a
 * log written by the service always folds back to the same state. Activation is process-local
 * and checked by the service, not here.
 */
export function transition(prev: Goal | undefined, op: MutatingOperation, args: TransitionArgs): Goal {
  if (op === 'create') return create(prev, args)
  if (!prev) throw noGoal(op)
  switch (op) {
    case 'edit': return edit(prev, args)
    case 'pause':
      requirePhase(prev, op, ['active'], 'Only an active goal can be paused.')
      return snapshot(prev, args.now, { phase: 'paused' })
    case 'resume':
      requirePhase(prev, op, ['paused', 'blocked', 'active'], 'A complete goal stays complete; create a new goal instead.')
      if (prev.roundsStarted >= prev.maxGoalRounds) {
        throw new GoalError('GOAL_ROUND_LIMIT', `The goal has used all ${prev.maxGoalRounds} rounds; raise its maximum rounds with an edit before resuming it.`)
      }
      {
        const reached = budgetsReached(prev)
        if (reached.length) {
          const names = reached.map((one) => describeBudget(one.budget)).join(' and ')
          throw new GoalError('GOAL_BUDGET_LIMIT', `${reached.map((one) => one.message).join(' ')} Raise the ${names} budget${reached.length > 1 ? 's' : ''} with an edit before resuming the goal.`)
        }
      }
      return snapshot(prev, args.now, { phase: 'active' })
    case 'complete':
      requirePhase(prev, op, ['active', 'paused', 'blocked'], 'The goal is already complete.')
      if (args.completedBy !== undefined && args.completedBy !== 'person') throw new GoalError('GOAL_INVALID_TRANSITION', `completedBy ${JSON.stringify(args.completedBy)} is not "person".`)
      return { ...snapshot(prev, args.now, { phase: 'complete' }), ...(args.completedBy === 'person' && { completedBy: 'person' as const }) }
    case 'block':
      requirePhase(prev, op, ['active'], 'Only an active goal can be blocked; resume it first if it still needs work.')
      return snapshot(prev, args.now, { phase: 'blocked', blockedReason: normalizeBlockReason(args.reason) })
    default:
      throw new GoalError('GOAL_INVALID_TRANSITION', `Unknown goal operation ${JSON.stringify(op)}.`)
  }
}

/** Clear is allowed from every phase; it only needs a goal to remove. */
export function checkClear(prev: Goal | undefined): Goal {
  if (!prev) throw noGoal('clear')
  return prev
}

function create(prev: Goal | undefined, args: TransitionArgs): Goal {
  if (prev && prev.phase !== 'complete') {
    throw new GoalError('GOAL_ALREADY_EXISTS', `A goal already exists (${prev.phase}: ${JSON.stringify(clip(prev.objective, 80, '...'))}). Edit it, or clear it before creating a new one.`)
  }
  if (typeof args.id !== 'string' || !args.id) throw new GoalError('GOAL_INVALID_TRANSITION', 'A new goal needs an id.')
  const objective = normalizeObjective(args.objective)
  const maxGoalRounds = checkMaxRounds(args.maxGoalRounds ?? args.defaultMaxGoalRounds)
  const budgets = normalizeBudgets(args.budgets)
  const goal: Goal = { id: args.id, objective, phase: 'active', revision: 1, maxGoalRounds, roundsStarted: 0, createdAt: args.now, updatedAt: args.now }
  if (budgets) goal.budgets = budgets
  const verify = normalizeVerify(args.verify ?? (args.defaultVerify?.length ? args.defaultVerify : undefined))
  if (verify?.length) goal.verify = verify
  if (args.until !== undefined) goal.until = normalizeCondition(args.until)
  return goal
}

function edit(prev: Goal, args: TransitionArgs): Goal {
  if (args.objective === undefined && args.maxGoalRounds === undefined && args.budgets === undefined && args.verify === undefined) {
    throw new GoalError('GOAL_INVALID_TRANSITION', 'An edit changes the objective, the maximum rounds, the budgets or the check; none was given.')
  }
  const objective = args.objective === undefined ? prev.objective : normalizeObjective(args.objective)
  const maxGoalRounds = args.maxGoalRounds === undefined ? prev.maxGoalRounds : checkMaxRounds(args.maxGoalRounds)
  const given = normalizeBudgets(args.budgets)
  if (args.budgets !== undefined && !given) throw new GoalError('GOAL_INVALID_BUDGET', 'The edit names budgets but sets none; give tokens, costUsd or activeTimeMs.')
  const budgets = given ? { ...prev.budgets, ...given } : prev.budgets
  const verify = args.verify === undefined ? prev.verify : normalizeVerify(args.verify)
  return snapshot(prev, args.now, { phase: prev.phase, objective, maxGoalRounds, budgets, verify: verify ?? [], blockedReason: prev.blockedReason })
}

/** Next revision of `prev`; `blockedReason` exists exactly while blocked, and no key is ever `undefined` (JSON round trip). */
function snapshot(prev: Goal, now: number, change: { phase: GoalPhase; objective?: string; maxGoalRounds?: number; budgets?: GoalBudgets; verify?: string[]; blockedReason?: BlockedReason }): Goal {
  const goal: Goal = {
    id: prev.id,
    objective: change.objective ?? prev.objective,
    phase: change.phase,
    revision: prev.revision + 1,
    maxGoalRounds: change.maxGoalRounds ?? prev.maxGoalRounds,
    roundsStarted: prev.roundsStarted,
    createdAt: prev.createdAt,
    updatedAt: now,
  }
  if (change.phase === 'blocked' && change.blockedReason) goal.blockedReason = { ...change.blockedReason }
  const budgets = change.budgets ?? prev.budgets
  if (budgets) goal.budgets = sortedBudgets(budgets)
  if (prev.spent) goal.spent = { ...prev.spent }
  const verify = change.verify ?? prev.verify
  if (verify?.length) goal.verify = [...verify]
  if (prev.until !== undefined) goal.until = prev.until
  if (prev.verification) goal.verification = structuredClone(prev.verification)
  if (prev.judgement) goal.judgement = structuredClone(prev.judgement)
  return goal
}

/** Keys in one order, so a merged edit and its replay compare equal field by field. */
function sortedBudgets(budgets: GoalBudgets): GoalBudgets {
  const sorted: GoalBudgets = {}
  for (const key of ['tokens', 'costUsd', 'activeTimeMs'] as const) if (budgets[key] !== undefined) sorted[key] = budgets[key]
  return sorted
}

function requirePhase(prev: Goal, op: MutatingOperation, allowed: GoalPhase[], advice: string): void {
  if (!allowed.includes(prev.phase)) {
    throw new GoalError('GOAL_INVALID_TRANSITION', `Cannot ${op} a ${prev.phase} goal. ${advice}`)
  }
}

function noGoal(op: GoalOperation): GoalError {
  return new GoalError('GOAL_NOT_FOUND', `There is no goal to ${op}; create one first.`)
}
