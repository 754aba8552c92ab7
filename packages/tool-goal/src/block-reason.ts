import { MODEL_BLOCK_CODE, type BlockedReason } from '@goalkeeper/goal'

/**
 * The reason a model's block is stored with: always `MODEL_BLOCK_CODE`, so a model cannot claim a code the
 * driver or a policy owns (`round-limit` would make a host report the goal out of rounds). The model's own
 * label, if it gave one, stays readable at the start of the message. Anything that is not a reason with a
 * text message is passed on unchanged for the goal domain to refuse with its own advice.
 */
export function modelBlockReason(reason: unknown): BlockedReason {
  const given = reason as { code?: unknown; message?: unknown } | null
  if (typeof given !== 'object' || given === null || Array.isArray(given) || typeof given.message !== 'string') return reason as BlockedReason
  const extra = Object.keys(given).filter((key) => key !== 'code' && key !== 'message')
  if (extra.length) return reason as BlockedReason
  const label = typeof given.code === 'string' ? given.code.trim() : ''
  const message = given.message.trim()
  return { code: MODEL_BLOCK_CODE, message: label && message && label !== MODEL_BLOCK_CODE ? `${label}: ${message}` : message }
}
