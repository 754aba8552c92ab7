import type { TurnOutcome } from '@goalkeeper/session'
import { BLOCK, type BlockCodeOf, type BlockedReason } from '@goalkeeper/goal'

/** How a goal round came to an end. */
export type RoundEnd =
  /** At idle after its turn: the outcome (undefined if none was seen), with any post-turn flush failure already reported. */
  | { kind: 'turn'; outcome: TurnOutcome | undefined }
  /** `agent/cancel-requested` while the round was reserved, under admission or running. */
  | { kind: 'cancelled'; reason: string }
  /** A round the driver still held current did not get in: dropped, rejected or thrown downstream, vetoed, or altered. */
  | { kind: 'refused'; why: string }
  /** `agent.send` of the reservation threw. */
  | { kind: 'send-failed' }

/** What the driver does about it. */
export type RoundSettlement =
  /** The next round goes on; `note` says why a round that did not end normally still counts as done (`step-limit`). */
  | { kind: 'continue'; note?: string }
  /** The goal moved during the round (a mutation wins): nothing to do. */
  | { kind: 'stand'; why: string }
  | { kind: 'pause'; why: string }
  /** The round yielded to a human message at a step boundary: the goal stays active and armed, rounds go on after it. */
  | { kind: 'preempted'; why: string }
  | { kind: 'block'; reason: BlockedReason }
  | { kind: 'disarm'; why: string }

/** Block codes the driver writes into `blockedReason.code`. */
export const DRIVER_BLOCK_CODES = {
  roundLimit: BLOCK.roundLimit,
  usageLimited: BLOCK.usageLimited,
  turnError: BLOCK.turnError,
  maxTokens: BLOCK.maxTokens,
  refused: BLOCK.refused,
  unknownOutcome: BLOCK.unknownOutcome,
  promptRejected: BLOCK.promptRejected,
  queueFailed: BLOCK.queueFailed,
  contextOverflow: BLOCK.contextOverflow,
} as const satisfies Record<string, BlockCodeOf<'driver'>>

const USAGE_LIMIT_CODES = new Set(['RATE_LIMIT', 'QUOTA'])

/**
 * The turn error of a round that used all its steps (agent-loop `maxSteps`). The round stops there, not the
 * goal: long work spans rounds, and the guards, whose counts carry across rounds, judge whether it goes anywhere.
 */
export const STEP_LIMIT_CODE = 'MAX_STEPS'

/** The model's refusal (model error `REFUSED`): no next round would go differently, and a person must look. */
const REFUSED_CODE = 'REFUSED'

/**
 * The settlement table of DESIGN.md section 9.7, every row of it. `round` is the round's number; `moved`
 * says why the live goal is no longer the one the round was reserved for, and is undefined while it is.
 * A cancel always stops automatic work (pause, or disarm when the goal moved); a turn outcome or a refusal
 * yields to a goal that moved during the round. Flush failures disarm whatever turn they belong to, so
 * the driver handles them where they are reported, not here.
 */
export function settleRound(end: RoundEnd, { round, moved }: { round: number; moved?: string }): RoundSettlement {
  switch (end.kind) {
    case 'cancelled': {
      const why = `round ${round} was cancelled (${end.reason})`
      return moved ? { kind: 'disarm', why } : { kind: 'pause', why }
    }
    case 'refused':
      if (moved) return { kind: 'stand', why: `round ${round} was not admitted (${end.why}); ${moved}` }
      return { kind: 'block', reason: { code: DRIVER_BLOCK_CODES.promptRejected, message: `Goal round ${round} was not admitted: ${end.why}.` } }
    case 'send-failed':
      // Only a goal still active and armed is settled (section 9.7): one disarmed, paused or edited inside
      // `send` was stopped or changed by someone else, and that stands.
      if (moved) return { kind: 'stand', why: `queueing round ${round} failed; ${moved}, so that change stands` }
      return { kind: 'block', reason: { code: DRIVER_BLOCK_CODES.queueFailed, message: `Queueing goal round ${round} failed.` } }
    case 'turn': {
      const action = settleOutcome(end.outcome, round)
      return action.kind === 'disarm' || !moved ? action : { kind: 'stand', why: `round ${round} ended; ${moved}, so that change stands` }
    }
  }
}

/**
 * The turn-outcome rows. Cancellation is settled earlier, in `agent/cancel-requested`; an `aborted` outcome
 * that reaches this table was not announced that way and is treated like a cancel, because an abort is never
 * a reason to go on.
 */
function settleOutcome(outcome: TurnOutcome | undefined, round: number): RoundSettlement {
  const kind = (outcome as { kind?: unknown } | undefined)?.kind
  switch (kind) {
    case 'completed':
      return { kind: 'continue' }
    case 'aborted':
      return { kind: 'pause', why: `round ${round} was aborted` }
    case 'preempted': {
      const { cause } = outcome as { cause?: unknown }
      return { kind: 'preempted', why: `round ${round} ended early for human input (${typeof cause === 'string' ? cause : 'no cause recorded'}); rounds go on after it` }
    }
    case 'error': {
      const { code, message } = outcome as { code?: unknown; message?: unknown }
      const text = `${String(code)}: ${typeof message === 'string' && message ? message : 'no message'}`
      if (code === REFUSED_CODE) {
        return { kind: 'block', reason: { code: DRIVER_BLOCK_CODES.refused, message: `The model refused to work on the goal (${text}).` } }
      }
      if (code === STEP_LIMIT_CODE) {
        return { kind: 'continue', note: `round ${round} reached the step limit (step-limit: ${text}); the round counts as used and the next one goes on` }
      }
      if (typeof code === 'string' && USAGE_LIMIT_CODES.has(code)) {
        return { kind: 'block', reason: { code: DRIVER_BLOCK_CODES.usageLimited, message: `The model provider reported a usage limit (${text}). Resume the goal when the limit allows.` } }
      }
      if (code === 'CONTEXT_OVERFLOW') {
        return { kind: 'block', reason: { code: DRIVER_BLOCK_CODES.contextOverflow, message: `The model refused goal round ${round} as too long even after the history was compacted (${text}). Set the provider's contextWindow (or compaction.contextWindow) to the server's real limit, raise the server's limit (Ollama's num_ctx), or give the goal less to read per round; then resume the goal.` } }
      }
      return { kind: 'block', reason: { code: DRIVER_BLOCK_CODES.turnError, message: `The goal round ended with an error (${text}).` } }
    }
    case 'max-tokens':
      return { kind: 'block', reason: { code: DRIVER_BLOCK_CODES.maxTokens, message: 'The goal round stopped at the model\'s output token limit.' } }
    case 'disposed':
    case 'interrupted':
      return { kind: 'disarm', why: `the round's turn ended ${kind}` }
    default:
      return { kind: 'block', reason: { code: DRIVER_BLOCK_CODES.unknownOutcome, message: `The goal round ended with an outcome the driver does not know (${describeKind(kind)}).` } }
  }
}

function describeKind(kind: unknown): string {
  if (kind === undefined) return 'none recorded'
  return JSON.stringify(kind) ?? String(kind)
}
