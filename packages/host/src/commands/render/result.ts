import { BLOCK, budgetsReached, isRunnable, type Goal, type GoalState } from '@goalkeeper/goal'
import { ExitCode } from '../../exit-codes.ts'
import type { AgentRun, RestState } from '../run/agent-run.ts'
import { goalSummary } from './goal-text.ts'
import { costOfCalls, describeCost, describeUsage, usageOfCalls } from './usage.ts'
import { goalExitCode, turnExitCode } from './outcome.ts'
import type { AnswerCheck } from '../run/output-schema.ts'
import { enforceAnswerSchema } from '../run/schema-retry.ts'

/** Why the goal's spend shows fewer tokens than the usage line (goal's tokensOf). */
export const TOKEN_RULE = "tokens used counts every input token; the goal's spend and token budget count input not read from the cache, plus output"

/** After the work is at rest: the answer (unless it was streamed), the goal summary, whether it is saved, hints; returns the exit code. */
export async function reportResult(run: AgentRun, state: RestState, options: { goal: boolean }): Promise<number> {
  const { term } = run
  // Only an answer that stands is checked: a goal blocked or a turn failed already says there is none.
  let check: AnswerCheck | undefined
  if (run.answerSchema && state === 'rest' && succeeded(run, options)) ({ state, check } = await enforceAnswerSchema(run, run.answerSchema))
  if (state === 'gone') term.note('the agent was shut down before its work ended')
  const answer = run.answer()
  if (answer && !term.streaming) term.out(answer)
  const goal = run.goal()
  const showGoal = options.goal || (run.goalChanged && !!goal)
  if (showGoal) term.out(goalSummary(goal), 'wrap')
  const usage = usageOfCalls(run.calls())
  if (usage) {
    const cost = costOfCalls(run.calls(), run.price())
    term.note(`tokens used: ${describeUsage(usage)} in ${usage.calls} model call${usage.calls === 1 ? '' : 's'}${cost === undefined ? '' : `; cost ${describeCost(cost)}`}`)
  }
  // Two token figures disagree when input came from the cache: say which rule each follows, once.
  if (usage?.cachedInputTokens && showGoal && goal?.spent?.tokens) term.note(TOKEN_RULE)
  const failure = await run.checkSaved()
  // A log removed while open left nothing to show: no hint that points at it.
  if (failure?.code === 'SESSION_LOST' && failure.reason === 'removed') term.note('nothing of the session is left to read: its log was removed')
  else run.hint(failure ? 'what was saved can be read with' : 'the session is saved; to read it', 'show', run.agent.id)
  continuationHint(run, goal)
  const exitCode = showGoal ? goalExitCode(goal) : state === 'gone' ? ExitCode.RUNTIME : turnExitCode(run.lastOutcome())
  if (!check) return run.finish(exitCode)
  if (!check.valid) return run.finish(exitCode === ExitCode.OK ? ExitCode.OUTPUT_INVALID : exitCode)
  return run.finish(exitCode, { output: check.value })
}

/** Whether the work ended well enough for its answer to count: the goal complete, or the last turn completed. */
function succeeded(run: AgentRun, options: { goal: boolean }): boolean {
  const goal = run.goals?.get(run.agent)
  return (options.goal || (run.goalChanged && !!goal) ? goalExitCode(goal) : turnExitCode(run.lastOutcome())) === ExitCode.OK
}

/** The exact command that continues a goal that stopped short of complete. */
export function continuationHint(run: AgentRun, goal: GoalState | undefined): void {
  if (!goal || goal.phase === 'complete' || isRunnable(goal)) return
  const session = ['goal', '--session', run.agent.id]
  if (goal.blockedReason?.code === BLOCK.roundLimit) run.hint('to give the goal more rounds', ...session, '--max-rounds', String(goal.maxGoalRounds + 5))
  else if (goal.blockedReason?.code === BLOCK.budgetLimited) budgetHint(run, goal)
  else run.hint(goal.phase === 'blocked' ? 'to retry the goal once the blocker is resolved' : 'to resume the goal', ...session)
}

/** A goal out of budget: the command that raises the budget it used up and resumes it. */
export function budgetHint(run: AgentRun, goal: GoalState): void {
  const raise = raiseBudgetArgs(goal)
  if (raise) return run.hint('to raise the budget and resume the goal', 'goal', '--session', run.agent.id, ...raise)
  run.term.note('the cost budget cannot be checked because a model price is unknown: set it under goal-budget `prices` in cordis.yml')
}

/**
 * The `goal` options that raise every budget a blocked goal used up (each to twice its limit, or more if the
 * spend is already past that), so the printed command resumes the goal in one go; undefined when raising
 * cannot help (a cost that has no known price). A dollar amount is rounded up to the cent, the form the
 * CLI's `--cost-budget` accepts (never `0.00`).
 */
export function raiseBudgetArgs(goal: Pick<Goal, 'budgets' | 'spent'>): string[] | undefined {
  const reached = budgetsReached(goal)
  if (!reached.length || reached.some((one) => one.used === null)) return undefined
  return reached.flatMap((one) => {
    const next = Math.max(one.limit * 2, one.used! + one.limit)
    switch (one.budget) {
      case 'tokens': return ['--token-budget', String(next)]
      case 'costUsd': return ['--cost-budget', (Math.ceil(Math.round(next * 1e6) / 1e4) / 100).toFixed(2)]
      case 'activeTimeMs': return ['--time-budget', `${Math.ceil(next / 60_000)}m`]
    }
  })
}
