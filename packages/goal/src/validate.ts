import { clip } from '@goalkeeper/kit'
import { GoalError } from './errors.ts'
import type { BlockedReason } from './types.ts'

/** Long enough for a detailed brief, short enough that it cannot swamp every round prompt. */
export const MAX_OBJECTIVE_LENGTH = 4000
const KEBAB = /^[a-z0-9]+(?:-[a-z0-9]+)*$/
const MAX_REASON_CODE_LENGTH = 64
const MAX_REASON_MESSAGE_LENGTH = 2000

export function normalizeObjective(value: unknown): string {
  if (typeof value !== 'string') {
    throw new GoalError('GOAL_INVALID_OBJECTIVE', 'The objective must be text describing what to achieve.')
  }
  const objective = value.trim()
  if (!objective) throw new GoalError('GOAL_INVALID_OBJECTIVE', 'The objective is empty; describe what the goal should achieve.')
  if (objective.length > MAX_OBJECTIVE_LENGTH) {
    throw new GoalError('GOAL_INVALID_OBJECTIVE', `The objective has ${objective.length} characters; shorten it to at most ${MAX_OBJECTIVE_LENGTH}.`)
  }
  return objective
}

/** A condition goal's condition: text like an objective, with the same limit. */
export function normalizeCondition(value: unknown): string {
  if (typeof value !== 'string' || !value.trim()) {
    throw new GoalError('GOAL_INVALID_OBJECTIVE', 'The condition must be text saying when the goal is done.')
  }
  const condition = value.trim()
  if (condition.length > MAX_OBJECTIVE_LENGTH) {
    throw new GoalError('GOAL_INVALID_OBJECTIVE', `The condition has ${condition.length} characters; shorten it to at most ${MAX_OBJECTIVE_LENGTH}.`)
  }
  return condition
}

export function checkMaxRounds(value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw new GoalError('GOAL_INVALID_MAX_ROUNDS', `The maximum number of goal rounds must be a positive whole number, got ${JSON.stringify(value) ?? String(value)}.`)
  }
  return value
}

export function normalizeBlockReason(value: unknown): BlockedReason {
  const reason = value as Partial<BlockedReason> | null
  if (typeof reason !== 'object' || reason === null || Array.isArray(reason)) {
    throw new GoalError('GOAL_INVALID_BLOCK_REASON', 'A block reason is an object { code, message }.')
  }
  const extra = Object.keys(reason).filter((key) => key !== 'code' && key !== 'message')
  if (extra.length) throw new GoalError('GOAL_INVALID_BLOCK_REASON', `A block reason has only code and message; remove ${extra.join(', ')}.`)
  const { code, message } = reason
  if (typeof code !== 'string' || !KEBAB.test(code) || code.length > MAX_REASON_CODE_LENGTH) {
    throw new GoalError('GOAL_INVALID_BLOCK_REASON', `The block reason code must be lower-kebab-case like "needs-credentials" (at most ${MAX_REASON_CODE_LENGTH} characters), got ${JSON.stringify(code) ?? String(code)}.`)
  }
  const text = typeof message === 'string' ? message.trim() : ''
  if (!text) throw new GoalError('GOAL_INVALID_BLOCK_REASON', 'The block reason message is empty; say what stops the goal.')
  if (text.length > MAX_REASON_MESSAGE_LENGTH) {
    throw new GoalError('GOAL_INVALID_BLOCK_REASON', `The block reason message has ${text.length} characters; shorten it to at most ${MAX_REASON_MESSAGE_LENGTH}.`)
  }
  return { code, message: text }
}

/**
 * The reason with an over-long message cut to the limit (ending in `…`), for callers whose block must
 * not be lost to the length of a text they compose; anything else is left for `normalizeBlockReason`.
 */
export function clipBlockReason(value: unknown): unknown {
  const message = (value as Partial<BlockedReason> | null)?.message
  if (typeof message !== 'string' || message.trim().length <= MAX_REASON_MESSAGE_LENGTH) return value
  return { ...(value as object), message: clip(message.trim(), MAX_REASON_MESSAGE_LENGTH) }
}
