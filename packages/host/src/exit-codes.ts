/**
 * Process exit codes of the `goalkeeper` CLI. Commands return one of these; scripts and CI rely on them,
 * so a value never changes meaning once published. 64, 70 and 74 follow BSD sysexits (EX_USAGE, EX_SOFTWARE, EX_IOERR);
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
  /** The model refused the request (its `refusal`): the answer says why. */
  REFUSED: 6,
  /**
   * `--output-schema`: the final answer is not JSON valid against the schema, also after the one retry turn
   * that gave the model the problems. The answer is still printed and written to `--output-last-message`.
   */
  OUTPUT_INVALID: 7,
  /** `pause`/`resume` of a goal another process runs: that process's goal service refused the control (its code says why). */
  CONTROL_REFUSED: 8,
  /** `pause`/`resume`: no process holds the session (none on this machine; with --database, no worker runs its goal). */
  NOT_HELD: 9,
  /** `pause`/`resume`: the process or worker that held the session is gone, or did not answer in time. */
  GONE: 10,
  /**
   * The session could not be saved (a flush failed: disk full, file size limit, I/O error, or its file
   * was removed or replaced while open); the message says why and what was kept. Follows EX_IOERR.
   */
  NOT_SAVED: 74,
  /** Bad command line, unreadable or invalid cordis.yml, or a composition entry that failed to load. */
  USAGE: 64,
  /** An unexpected runtime error. */
  RUNTIME: 70,
  /** Exited on a repeated signal without completing the ordered shutdown. */
  INTERRUPTED: 130,
} as const

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode]
