import { BLOCK, type GoalState } from '@goalkeeper/goal'
import type { TurnOutcome } from '@goalkeeper/session'
import { ExitCode } from '../../exit-codes.ts'

/** Block codes with an exit code of their own; every other block exits 2. */
const BLOCK_EXIT_CODES: Record<string, ExitCode> = {
  [BLOCK.roundLimit]: ExitCode.ROUND_LIMIT,
  [BLOCK.budgetLimited]: ExitCode.BUDGET_LIMIT,
  [BLOCK.refused]: ExitCode.REFUSED,
}

/**
 * The exit code for where a goal ended: complete 0, blocked 2, out of rounds (blocked `round-limit`) 4,
 * out of budget (blocked `budget-limited`) 5, refused by the model (blocked `refused`) 6,
 * and 3 for every state that stopped without an outcome (paused, disarmed while active, cleared).
 */
export function goalExitCode(goal: GoalState | undefined): ExitCode {
  if (!goal) return ExitCode.PAUSED
  if (goal.phase === 'complete') return ExitCode.OK
  if (goal.phase === 'blocked') return BLOCK_EXIT_CODES[goal.blockedReason?.code ?? ''] ?? ExitCode.BLOCKED
  return ExitCode.PAUSED
}

/** The exit code for the last turn of a plain prompt: completed 0, cancelled 3, refused by the model 6, anything else 70. */
export function turnExitCode(outcome: TurnOutcome | undefined): ExitCode {
  // A preempted turn yielded to queued input, which then ran: nothing failed.
  if (!outcome || outcome.kind === 'completed' || outcome.kind === 'preempted') return ExitCode.OK
  if (outcome.kind === 'aborted') return ExitCode.PAUSED
  if (outcome.kind === 'error' && outcome.code === 'REFUSED') return ExitCode.REFUSED
  return ExitCode.RUNTIME
}

/** Help text shared by the agent commands. */
export const EXIT_CODE_HELP = `
Exit codes:
  0    done: the turn completed, or the goal is complete
  2    the goal is blocked
  3    paused or cancelled (Ctrl-C, /goal pause), or the goal stopped without an outcome
  4    the goal ran out of rounds (blocked with round-limit)
  5    a budget of the goal is used up (blocked with budget-limited)
  6    the model refused the prompt (the answer says why); for a goal: blocked with refused
  7    the answer is not valid against --output-schema, also after one retry
  8    pause/resume: the process that runs the goal refused the control (its reason)
  9    pause/resume: no process holds the session (nor, with --database, a worker)
  10   pause/resume: the process or worker that held the session is gone
  64   bad command line or configuration (unreadable cordis.yml, an entry that did not load),
       an unknown session, or a session another process has open for writing
  70   runtime error (a model or session error, a failed turn)
  74   the session could not be saved (disk full, size limit, I/O error, file removed or replaced)
  130  forced exit by a repeated signal during shutdown`
