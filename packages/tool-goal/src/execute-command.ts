import type { Context } from 'cordis'
import { BUDGET_BLOCK_CODE, budgetReached, type AgentRef, type GoalState } from '@goalkeeper/goal'
import { describeError } from '@goalkeeper/kit'
import type { ParsedGoalCommand } from './command.ts'
import { GOAL_COMMAND_USAGE } from './command.ts'
import { COST_UNPRICED, costBudgetRefusal } from './cost-budget.ts'
import { editInput } from './edit-input.ts'
import { formatGoalStatus } from './status.ts'

export interface GoalCommandResult {
  ok: boolean
  /** Text for the human: the status, or what went wrong and what to do instead. */
  message: string
  /** Error code when not ok (a `GoalErrorCode`, or `GOAL_COMMAND_INVALID`). */
  code?: string
  /** The goal after the command; undefined when there is none. */
  goal?: GoalState
}

/** Command-specific next steps, appended to the domain's own advice. */
const ADVICE: Record<string, string> = {
  GOAL_ALREADY_EXISTS: 'Change it with /goal edit <objective>, or remove it with /goal clear and set a new one.',
  GOAL_NOT_FOUND: 'Set one with /goal <objective>.',
  GOAL_ROUND_LIMIT: 'Raise the cap with /goal edit --max-rounds N, then /goal resume.',
  GOAL_BUDGET_LIMIT: 'Raise it with /goal budget (for example --token-budget N), which resumes the goal.',
  GOAL_INVALID_TRANSITION: 'See the goal with /goal.',
}

/**
 * Runs a parsed `/goal` command for `agent` through `ctx.goals`. A human issued it, so it needs no further
 * authority. A corrupt goal log is the answer to every command, so it is never shown as "no goal".
 */
export function executeGoalCommand(ctx: Context, agent: AgentRef, command: ParsedGoalCommand): GoalCommandResult {
  const health = ctx.goals.health(agent)
  if (!health.ok) return refusal(ctx, agent, health.error)
  try {
    return run(ctx, agent, command)
  } catch (error) {
    return refusal(ctx, agent, error)
  }
}

function refusal(ctx: Context, agent: AgentRef, error: unknown): GoalCommandResult {
  const code = typeof (error as { code?: unknown })?.code === 'string' ? (error as { code: string }).code : 'GOAL_COMMAND_FAILED'
  const base = describeError(error)
  const advice = ADVICE[code]
  return { ok: false, code, message: advice ? `${base} ${advice}` : base, goal: ctx.goals.get(agent) }
}

/** A cost budget on a model without a known price is refused before it is set (`costBudgetRefusal`). */
function unkeepableCost(ctx: Context, agent: AgentRef, command: ParsedGoalCommand): GoalCommandResult | undefined {
  const refusal = costBudgetRefusal(ctx, agent.id, 'budgets' in command ? command.budgets?.costUsd : undefined)
  return refusal === undefined ? undefined : { ok: false, code: COST_UNPRICED, message: refusal, goal: ctx.goals.get(agent) }
}

function run(ctx: Context, agent: AgentRef, command: ParsedGoalCommand): GoalCommandResult {
  const goals = ctx.goals
  if (command.kind === 'invalid') return { ok: false, code: 'GOAL_COMMAND_INVALID', message: command.message, goal: goals.get(agent) }
  const unpriced = unkeepableCost(ctx, agent, command)
  if (unpriced) return unpriced
  if (command.kind === 'show') {
    const goal = goals.get(agent)
    return { ok: true, message: formatGoalStatus(goal), goal }
  }
  if (command.kind === 'create') {
    if (command.until !== undefined && !ctx.get('goalJudge')) {
      // A condition nobody judges would never complete the goal by itself.
      return { ok: false, code: 'GOAL_NO_JUDGE', message: '/goal until needs the goal-judge plugin, which is not loaded; set the goal with /goal <objective> instead.', goal: goals.get(agent) }
    }
    const until = command.until === undefined ? {} : { until: command.until }
    return done('Goal set.', goals.create(agent, { objective: command.objective, ...until, ...editInput(undefined, command.maxGoalRounds, command.budgets) }))
  }
  const current = goals.get(agent)
  if (!current) {
    return { ok: false, code: 'GOAL_NOT_FOUND', message: `There is no goal to ${command.kind}. ${ADVICE.GOAL_NOT_FOUND}` }
  }
  const ref = { id: current.id, revision: current.revision }
  switch (command.kind) {
    case 'edit': return done('Goal updated.', goals.edit(agent, ref, editInput(command.objective, command.maxGoalRounds, command.budgets)))
    case 'verify': return done(command.commands.length ? 'Check set.' : 'Check removed.', goals.edit(agent, ref, { verify: command.commands }))
    case 'budget': {
      const raised = goals.edit(agent, ref, { budgets: command.budgets })
      // Raising what stopped the goal means "go on", as `goal --session ID --token-budget N` does.
      if (raised.phase !== 'blocked' || raised.blockedReason?.code !== BUDGET_BLOCK_CODE || budgetReached(raised)) return done('Budget set.', raised)
      return done('Budget raised; goal resumed.', goals.resume(agent, { id: raised.id, revision: raised.revision }))
    }
    case 'pause': return done('Goal paused.', goals.pause(agent, ref))
    case 'resume': return done('Goal resumed.', goals.resume(agent, ref))
    case 'complete': return done('Goal complete, by your decision.', goals.complete(agent, ref, { by: 'person' }))
    case 'clear':
      goals.clear(agent, ref)
      return { ok: true, message: 'Goal cleared.' }
    default:
      return { ok: false, code: 'GOAL_COMMAND_INVALID', message: `Unknown /goal command.\n${GOAL_COMMAND_USAGE}` }
  }
}

function done(title: string, goal: GoalState): GoalCommandResult {
  return { ok: true, message: `${title}\n${formatGoalStatus(goal)}`, goal }
}
