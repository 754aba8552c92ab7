import { GoalError } from './errors.ts'
import type { Goal, GoalCheckRecord, GoalVerification } from './types.ts'

export const GOAL_CHECK_RECORD = 'goal/check'

const MAX_COMMANDS = 10
const MAX_COMMAND_LENGTH = 2000
/** The output kept with an attempt: enough to see why a check failed, small enough for every attempt. */
export const MAX_CHECK_OUTPUT = 2000

/**
 * The check commands given to create or edit: each non-empty text without NUL. Returns undefined for none;
 * an empty list (edit) removes the check.
 */
export function normalizeVerify(value: unknown): string[] | undefined {
  if (value === undefined) return undefined
  if (!Array.isArray(value)) throw new GoalError('GOAL_INVALID_CHECK', 'A check is a list of shell commands, e.g. ["npm test"].')
  if (value.length > MAX_COMMANDS) throw new GoalError('GOAL_INVALID_CHECK', `A check has at most ${MAX_COMMANDS} commands, got ${value.length}.`)
  return value.map((command, index) => {
    const text = typeof command === 'string' ? command.trim() : ''
    if (!text || text.includes('\0') || text.length > MAX_COMMAND_LENGTH) {
      throw new GoalError('GOAL_INVALID_CHECK', `Check command ${index + 1} must be non-empty text of at most ${MAX_COMMAND_LENGTH} characters without NUL, got ${JSON.stringify(command) ?? String(command)}.`)
    }
    return text
  })
}

/** Why `data` is not a legal `goal/check` record for `goal`, or undefined. Shared by the fold and `recordCheck`. */
export function checkViolation(goal: Goal | undefined, data: unknown): string | undefined {
  const record = data as Partial<GoalCheckRecord> | null
  if (typeof record !== 'object' || record === null || Array.isArray(record)) return 'the check record data is not an object'
  const keys = Object.keys(record).sort().join()
  if (keys !== 'command,exitCode,goalId,ok,output') return `check record data must have exactly the keys command, exitCode, goalId, ok, output, found ${keys}`
  if (typeof record.goalId !== 'string' || !record.goalId) return 'the check goalId is not a non-empty string'
  if (typeof record.command !== 'string' || !record.command) return 'the check command is not a non-empty string'
  if (typeof record.ok !== 'boolean') return 'the check ok is not a boolean'
  if (record.exitCode !== null && !Number.isSafeInteger(record.exitCode)) return `the check exitCode ${JSON.stringify(record.exitCode)} is neither null nor an integer`
  if (typeof record.output !== 'string' || record.output.length > MAX_CHECK_OUTPUT) return `the check output is not text of at most ${MAX_CHECK_OUTPUT} characters`
  if (!goal || goal.id !== record.goalId) return `the check is for goal ${JSON.stringify(record.goalId)}, which is not the current goal`
  if (!goal.verify) return 'the goal has no check'
  if (goal.phase === 'complete') return 'the goal is already complete'
  return undefined
}

export function addCheck(verification: GoalVerification | undefined, check: GoalCheckRecord): GoalVerification {
  return {
    attempts: (verification?.attempts ?? 0) + 1,
    failures: (verification?.failures ?? 0) + (check.ok ? 0 : 1),
    last: { command: check.command, ok: check.ok, exitCode: check.exitCode },
  }
}
