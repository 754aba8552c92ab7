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
  /** The same call several times in a row. */
  | 'repeat'
  /** A poll tool called the same way several times in a row without its result changing. */
  | 'poll'
  /** The same call failing with the same error, consecutively or not. */
  | 'same-error'
  /** A sequence of 2..maxCyclePeriod different calls repeated in full. */
  | 'cycle'

export interface LoopFinding {
  kind: LoopKind
  level: 'soft' | 'hard'
  /** Identical calls (repeat, poll, same-error) or full repetitions of the sequence (cycle). */
  count: number
  /** The repeated call, or the calls of one cycle in order. */
  calls: LoopCall[]
  /** repeat, poll: every call in the streak returned the same result. */
  sameResult: boolean
  /** same-error: the repeated error. */
  error?: ToolErrorInfo
}
