import type { GoalState } from '@goalkeeper/goal'
import { ExitCode } from '../../exit-codes.ts'
import { goalExitCode, turnExitCode } from './outcome.ts'
import { goalSummary } from './goal-text.ts'
import type { AgentWork, RestState } from './work.ts'

/** Words of a variadic argument as one text (`goalkeeper run fix the tests`). */
export function joinWords(words: unknown): string {
  return (Array.isArray(words) ? words : words === undefined ? [] : [words]).join(' ').trim()
}

/** After the work is at rest: the answer (unless it was streamed), the goal summary, hints; returns the exit code. */
export function reportResult(work: AgentWork, state: RestState, options: { goal: boolean }): number {
  const { term } = work
  if (state === 'gone') term.note('the agent was shut down before its work ended')
  const answer = work.answer()
  if (answer && !term.streaming) term.out(answer)
  const goal = work.goal()
  const showGoal = options.goal || (work.goalChanged && !!goal)
  if (showGoal) term.out(goalSummary(goal))
  work.hint('the session is saved; to read it', 'show', work.agent.id)
  continuationHint(work, goal)
  if (showGoal) return work.finish(goalExitCode(goal))
  return work.finish(state === 'gone' ? ExitCode.RUNTIME : turnExitCode(work.lastOutcome()))
}

/** The exact command that continues a goal that stopped short of complete. */
export function continuationHint(work: AgentWork, goal: GoalState | undefined): void {
  if (!goal || goal.phase === 'complete' || (goal.phase === 'active' && goal.activation === 'armed')) return
  const session = ['goal', '--session', work.agent.id]
  if (goal.blockedReason?.code === 'round-limit') work.hint('to give the goal more rounds', ...session, '--max-rounds', String(goal.maxGoalRounds + 5))
  else work.hint(goal.phase === 'blocked' ? 'to retry the goal once the blocker is resolved' : 'to resume the goal', ...session)
}
