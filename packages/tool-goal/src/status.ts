import { describePhase, describeShortfall, describeSpend, describeVerification, formatBudgetUsd, formatDuration, type GoalBudgets, type GoalSpend, type GoalState } from '@goalkeeper/goal'

/** Human-readable goal status for `/goal` and hosts; the goal's id and revision stay out (internal, see `--json`). */
export function formatGoalStatus(goal: GoalState | undefined): string {
  if (!goal) return 'No goal. Set one with /goal <objective>.'
  const lines = [
    `Objective: ${goal.objective}`,
    `Phase: ${phaseLine(goal)}`,
    `Rounds: ${goal.roundsStarted}/${goal.maxGoalRounds}`,
  ]
  if (goal.budgets) lines.push(`Budgets: ${describeBudgets(goal.budgets)}`)
  if (goal.spent) lines.push(`Spent: ${describeSpend(goal)}, ${goal.spent.calls} model calls`)
  if (goal.verify) lines.push(`Check: ${goal.verify.join(' && ')}${goal.verification ? ` (${goal.verification.attempts} runs, last ${goal.verification.last.ok ? 'passed' : 'failed'})` : ''}`)
  if (goal.until) lines.push(`Done when: ${goal.until}`)
  if (goal.blockedReason) lines.push(`Blocked: ${goal.blockedReason.code}: ${goal.blockedReason.message}`)
  // What a completion stood on, or why the last try did not complete: the goal package's one wording.
  const shortfall = describeShortfall(goal)
  if (goal.phase === 'complete') lines.push(`Completed on: ${describeVerification(goal)}`)
  else if (shortfall) lines.push(`Not complete: ${shortfall}`)
  return lines.join('\n')
}

/** The phase as every front end words it, with the command that continues a disarmed goal. */
function phaseLine(goal: GoalState): string {
  return goal.phase === 'active' && goal.activation === 'disarmed' ? `${describePhase(goal)}; /goal resume to continue` : describePhase(goal)
}

/**
 * The goal as the model sees it in tool results: snake_case, matching the tool arguments. Activation is
 * left out on purpose: tool results are persisted, and activation must never reach a session file.
 */
export function goalView(goal: GoalState | undefined): Record<string, unknown> | null {
  if (!goal) return null
  return {
    goal_id: goal.id,
    revision: goal.revision,
    objective: goal.objective,
    phase: goal.phase,
    rounds_used: goal.roundsStarted,
    max_rounds: goal.maxGoalRounds,
    ...(goal.blockedReason ? { blocked_reason: goal.blockedReason } : {}),
    ...(goal.budgets ? { budgets: snakeBudgets(goal.budgets) } : {}),
    ...(goal.spent ? { spent: snakeSpent(goal.spent) } : {}),
    ...(goal.verify ? { check: { commands: goal.verify, runs_on: 'update_goal complete', ...(goal.verification ? { attempts: goal.verification.attempts, failures: goal.verification.failures, last: goal.verification.last } : {}) } } : {}),
  }
}

function describeBudgets(budgets: GoalBudgets): string {
  const parts: string[] = []
  if (budgets.tokens !== undefined) parts.push(`${budgets.tokens} tokens`)
  if (budgets.costUsd !== undefined) parts.push(formatBudgetUsd(budgets.costUsd))
  if (budgets.activeTimeMs !== undefined) parts.push(`${formatDuration(budgets.activeTimeMs)} in rounds`)
  return parts.join(', ')
}

function snakeBudgets(budgets: GoalBudgets): Record<string, number> {
  return {
    ...(budgets.tokens !== undefined ? { tokens: budgets.tokens } : {}),
    ...(budgets.costUsd !== undefined ? { cost_usd: budgets.costUsd } : {}),
    ...(budgets.activeTimeMs !== undefined ? { active_time_seconds: Math.round(budgets.activeTimeMs / 1000) } : {}),
  }
}

function snakeSpent(spent: GoalSpend): Record<string, number | null> {
  return { tokens: spent.tokens, cost_usd: spent.costUsd, active_time_seconds: Math.round(spent.activeTimeMs / 1000), model_calls: spent.calls }
}
