import type { GoalActivation, GoalPhase } from './types.ts'

/**
 * Whether rounds run for this goal: active and armed. The one answer to "will the round driver go on", for
 * the driver itself and for every front end that waits for it or shows it.
 */
export function isRunnable<G extends { phase: GoalPhase; activation: GoalActivation }>(goal: G | undefined): goal is G & { phase: 'active'; activation: 'armed' } {
  return goal?.phase === 'active' && goal.activation === 'armed'
}

/** Whether the goal reached an end of its own (complete, or blocked for whatever reason): nothing is left to pursue until a person acts. */
export function isSettled(goal: { phase: GoalPhase } | undefined): boolean {
  return goal?.phase === 'complete' || goal?.phase === 'blocked'
}
