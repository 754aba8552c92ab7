import type { GoalState } from '@goalkeeper/goal'

/** Human-readable goal status for `/goal` and hosts. */
export function formatGoalStatus(goal: GoalState | undefined): string {
  if (!goal) return 'No goal. Set one with /goal <objective>.'
  const lines = [
    `Goal ${goal.id} (revision ${goal.revision})`,
    `Objective: ${goal.objective}`,
    `Phase: ${describePhase(goal)}`,
    `Rounds: ${goal.roundsStarted}/${goal.maxGoalRounds}`,
  ]
  if (goal.blockedReason) lines.push(`Blocked: ${goal.blockedReason.code}: ${goal.blockedReason.message}`)
  return lines.join('\n')
}

function describePhase(goal: GoalState): string {
  if (goal.phase !== 'active') return goal.phase
  return goal.activation === 'armed' ? 'active (armed: rounds run automatically)' : 'active (disarmed: /goal resume to continue)'
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
  }
}
