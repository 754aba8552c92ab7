import { describeGoalStatus, describePhase, describeShortfall, describeSpend, describeVerification, type Goal, type GoalActivation, type GoalChange, type GoalState } from '@goalkeeper/goal'
import { oneLine } from './text.ts'

const rounds = (goal: Goal) => `${goal.roundsStarted}/${goal.maxGoalRounds}`
const cap = (goal: Goal) => `at most ${goal.maxGoalRounds} ${goal.maxGoalRounds === 1 ? 'round' : 'rounds'}`

/**
 * One progress line for a goal mutation. With a `width`, a set or edited goal's objective is shortened so
 * that the rounds and budgets after it still fit.
 */
export function describeGoalChange(change: GoalChange, width?: number): string {
  const goal = change.goal
  if (!goal) return 'goal cleared'
  // The objective gets what the rest of the line leaves (its quotes counted), 100 at most, 10 at least.
  const objective = (head: string, tail: string) => {
    const left = width === undefined ? 100 : width - Array.from(head + tail).length - 2
    const room = Math.min(100, Math.max(10, left))
    return `${head}${JSON.stringify(oneLine(goal.objective, room))}${tail}`
  }
  switch (change.op) {
    case 'create': {
      const budget = goal.budgets ? `; budget ${describeSpend(goal)}` : ''
      return objective('goal set: ', ` (${cap(goal)}${budget})`)
    }
    case 'edit': return objective('goal edited: ', ` (${cap(goal)}, ${goal.phase})`)
    case 'pause': return `goal paused after round ${rounds(goal)}`
    case 'resume': return `goal resumed after round ${rounds(goal)}`
    case 'complete': {
      const how = describeVerification(goal)
      return `goal complete after round ${rounds(goal)}${how === 'not verified' ? '' : ` (${how})`}`
    }
    case 'block': return `goal blocked after round ${rounds(goal)}: ${goal.blockedReason?.code}: ${oneLine(goal.blockedReason?.message ?? '', 200)}`
    default: return `goal ${change.op}: ${goal.phase}`
  }
}


/** Activation only tells something new while the goal is active (other phases are always disarmed). */
export function describeActivation(activation: GoalActivation, goal: GoalState | undefined): string | undefined {
  if (goal?.phase !== 'active') return undefined
  return activation === 'armed' ? 'goal armed: rounds run automatically' : 'goal disarmed: no automatic rounds until it is resumed'
}

/** The final goal summary printed on stdout, with a line of spend against the budgets when there is one. */
export function goalSummary(goal: GoalState | undefined): string {
  const summary = goalOutcome(goal)
  const spend = goal && describeSpend(goal)
  return spend ? `${summary}\nSpent: ${spend}` : summary
}

function goalOutcome(goal: GoalState | undefined): string {
  if (!goal) return 'No goal: it was cleared.'
  const objective = JSON.stringify(oneLine(goal.objective, 200))
  if (goal.phase === 'complete') return `Goal ${describeGoalStatus(goal)} after ${rounds(goal)} rounds: ${objective}`
  const shortfall = describeShortfall(goal)
  return [`Goal ${describePhase(goal)} after ${rounds(goal)} rounds: ${objective}`, goal.blockedReason?.message, shortfall && `Not complete: ${shortfall}`].filter(Boolean).join('\n')
}

/** A line for a `goal/auto-resume` notice: when the next try is, or why there is none. */
export function describeAutoResume(notice: { kind: string; at?: number; attempt?: number; maxTries?: number; why?: string }): string {
  switch (notice.kind) {
    case 'scheduled': return `goal resumes automatically at ${new Date(notice.at ?? 0).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC')} (try ${notice.attempt} of ${notice.maxTries}; any input cancels it)`
    case 'resumed': return `goal resumed automatically (try ${notice.attempt})`
    case 'cancelled': return `automatic resume cancelled: ${notice.why}`
    case 'declined': return `no automatic resume: ${notice.why}`
    default: return `auto-resume: ${notice.kind}`
  }
}
