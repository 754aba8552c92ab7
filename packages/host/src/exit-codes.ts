/**
 * Process exit codes of the `goalkeeper` CLI. Commands return one of these; scripts and CI rely on them,
 * so a value never changes meaning once published. 64 and 70 follow BSD sysexits (EX_USAGE, EX_SOFTWARE);
 * 130 is the shell convention for "ended by SIGINT".
 */
export const ExitCode = {
  /** Success; for goal commands: the goal is complete. */
  OK: 0,
  /** The goal is blocked (by the model, a policy plugin, or an error turned into a block). */
  BLOCKED: 2,
  /** The goal was paused or the turn cancelled (for example by the first Ctrl-C). */
  PAUSED: 3,
  /** The goal ran out of rounds (blocked with `round-limit`). */
  ROUND_LIMIT: 4,
  /** A budget of the goal is used up (blocked with `budget-limited`): tokens, cost or active time. */
  BUDGET_LIMIT: 5,
  /** Bad command line, unreadable or invalid cordis.yml, or a composition entry that failed to load. */
  USAGE: 64,
  /** An unexpected runtime error. */
  RUNTIME: 70,
  /** Exited on a repeated signal without completing the ordered shutdown. */
  INTERRUPTED: 130,
} as const

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode]
