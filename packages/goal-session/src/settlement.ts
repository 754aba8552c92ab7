import type { TurnOutcome } from '@goalkeeper/session'
import type { BlockedReason } from '@goalkeeper/goal'

/** What the driver does with a goal round once its turn has ended (DESIGN.md section 9.7). */
export type RoundSettlement =
  | { kind: 'continue' }
  | { kind: 'pause' }
  | { kind: 'block'; reason: BlockedReason }
  | { kind: 'disarm'; why: string }

/** Block codes the driver writes into `blockedReason.code`. */
export const DRIVER_BLOCK_CODES = {
  roundLimit: 'round-limit',
  usageLimited: 'usage-limited',
  turnError: 'turn-error',
  maxTokens: 'max-tokens',
  unknownOutcome: 'unknown-turn-outcome',
  promptRejected: 'prompt-rejected',
  queueFailed: 'queue-failed',
} as const

const USAGE_LIMIT_CODES = new Set(['RATE_LIMIT', 'QUOTA'])

/**
 * Maps a round's turn outcome to the driver's action. Cancellation is settled earlier, in
 * `agent/cancel-requested`; an `aborted` outcome that reaches this table was not announced that way
 * and is treated like a cancel, because an abort is never a reason to go on.
 */
export function settleRound(outcome: TurnOutcome | undefined): RoundSettlement {
  const kind = (outcome as { kind?: unknown } | undefined)?.kind
  switch (kind) {
    case 'completed':
      return { kind: 'continue' }
    case 'aborted':
      return { kind: 'pause' }
    case 'error': {
      const { code, message } = outcome as { code?: unknown; message?: unknown }
      const text = `${String(code)}: ${typeof message === 'string' && message ? message : 'no message'}`
      if (typeof code === 'string' && USAGE_LIMIT_CODES.has(code)) {
        return { kind: 'block', reason: { code: DRIVER_BLOCK_CODES.usageLimited, message: `The model provider reported a usage limit (${text}). Resume the goal when the limit allows.` } }
      }
      return { kind: 'block', reason: { code: DRIVER_BLOCK_CODES.turnError, message: `The goal round ended with an error (${text}).` } }
    }
    case 'max-tokens':
      return { kind: 'block', reason: { code: DRIVER_BLOCK_CODES.maxTokens, message: 'The goal round stopped at the model\'s output token limit.' } }
    case 'disposed':
    case 'interrupted':
      return { kind: 'disarm', why: `the round's turn ended ${kind}` }
    default:
      return { kind: 'block', reason: { code: DRIVER_BLOCK_CODES.unknownOutcome, message: `The goal round ended with an outcome the driver does not know (${describe(kind)}).` } }
  }
}

function describe(kind: unknown): string {
  if (kind === undefined) return 'none recorded'
  return JSON.stringify(kind) ?? String(kind)
}
