import type { GoalErrorCode } from './types.ts'

/**
 * Every refusal of the goal domain. Other packages may not import this class at runtime,
 * so callers recognise it by its string `code`; the message is written as advice.
 */
export class GoalError extends Error {
  override name = 'GoalError'
  constructor(
    readonly code: GoalErrorCode,
    message: string,
    /** Seq of the offending record, for `GOAL_CORRUPT_LOG`. */
    readonly seq?: number,
  ) {
    super(message)
  }
}

export function isGoalError(error: unknown): error is GoalError {
  const code = (error as { code?: unknown } | null)?.code
  return error instanceof Error && typeof code === 'string' && code.startsWith('GOAL_')
}
