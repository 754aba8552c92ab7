import type { MessageSource } from '@goalkeeper/session'
import type { GoalState } from '@goalkeeper/goal'

export type UpdateAction = 'edit' | 'pause' | 'resume' | 'complete' | 'block'

/**
 * Where the current turn's authority comes from. A human message wins. A goal round counts only if
 * it is the exact current round of the live, armed goal: same id, same revision (a human change
 * during the round revokes it) and round === roundsStarted. Plugin messages never grant anything,
 * and message text is never consulted, so a forged "<goal_round>" in a message is just text.
 */
export type Authority = 'human' | 'goal-round' | 'none'

export function authorityOf(turnSources: readonly MessageSource[], goal: GoalState | undefined): Authority {
  const sources = Array.isArray(turnSources) ? turnSources : []
  if (sources.some((source) => source?.kind === 'human')) return 'human'
  if (goal && goal.activation === 'armed' && sources.some((source) => source?.kind === 'goal'
    && source.goalId === goal.id && source.revision === goal.revision && source.round === goal.roundsStarted)) {
    return 'goal-round'
  }
  return 'none'
}

export interface Refusal {
  code: string
  message: string
}

/** Checks authority for a tool action before any argument is looked at. */
export function checkAuthority(action: 'create' | UpdateAction, authority: Authority, goal: GoalState | undefined, blockedThreshold: number): Refusal | undefined {
  if (authority === 'human') return undefined
  if (action !== 'complete' && action !== 'block') {
    return {
      code: 'GOAL_UNAUTHORIZED',
      message: `Only the user can ${action === 'create' ? 'create a goal' : `${action} the goal`}, and no user message is part of this turn. Continue working on the current objective, or ask the user.`,
    }
  }
  if (authority === 'none') {
    return {
      code: 'GOAL_UNAUTHORIZED',
      message: `The goal can be marked ${action === 'complete' ? 'complete' : 'blocked'} only in a user turn or in the current goal round, and this turn is neither. Report your findings instead.`,
    }
  }
  if (action === 'block' && goal && goal.roundsStarted < blockedThreshold) {
    return {
      code: 'GOAL_BLOCK_TOO_EARLY',
      message: `The goal cannot be blocked yet: ${goal.roundsStarted} of at least ${blockedThreshold} rounds have started. Try another approach to make progress; if it still cannot move after round ${blockedThreshold}, block it then with the evidence.`,
    }
  }
  return undefined
}
