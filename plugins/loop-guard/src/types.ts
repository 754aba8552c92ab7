import type { ToolErrorInfo } from '@goalkeeper/session'

/** One tracked call as the messages quote it. */
export interface LoopCall {
  name: string
  /** Canonical arguments (keys sorted, volatile keys dropped, strings normalised), or the raw text when not JSON. */
  arguments: string
  /** False when the model sent arguments that are not valid JSON. */
  json: boolean
}

export type LoopKind =
  /** The same (or a near-identical) call several times in a row, returning the same result. */
  | 'repeat'
  /** The same call several times in a row while its result keeps changing: waiting on something. */
  | 'poll'
  /** The same call failing with the same error, consecutively or not, with no write in between. */
  | 'same-error'
  /** Calls that each repeat, with the same result, the call one period (2..maxCyclePeriod) earlier. */
  | 'cycle'
  /**
   * Calls in a row that each redo, with the same arguments and result, a call made `blockRepetition` times
   * before in the goal, with nothing new in between: a block of calls done again, contiguous or not, of any length.
   */
  | 'block'

export interface LoopFinding {
  kind: LoopKind
  level: 'soft' | 'hard'
  /**
   * repeat, poll, same-error: calls counted; cycle: calls in a row that repeated the call one period earlier;
   * block: calls in a row that redid a call made `repetition` times before.
   */
  count: number
  /** The repeated call, the calls of one period of the cycle, or the latest calls of the block (at most 6), in order, the latest last. */
  calls: LoopCall[]
  /** repeat: every call in the streak returned the same result; false when failures with changing errors were counted. */
  sameResult: boolean
  /** repeat: some calls of the streak had arguments that were only near-identical (numbers, comments, similar text). */
  nearIdentical?: boolean
  /** same-error: the repeated error. */
  error?: ToolErrorInfo
  /** block: how many times each counted call had been made before (blockRepetition, at least). */
  repetition?: number
  /** poll: the count that stops the run (0: never). */
  limit?: number
}
