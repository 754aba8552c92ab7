import type { Agent } from '@goalkeeper/agent-loop'
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

/**
 * A policy plugin acted on a verdict for `turn`: it steered guidance (`continue`) or stopped the turn
 * (`stop`). Both policy plugins declare and emit this event, and start the agent over on it.
 */
export interface PolicySettlement {
  source: string
  turn: number
  action: 'continue' | 'stop'
}

declare module 'cordis' {
  interface Events {
    /**
     * Isolated, after a policy plugin acted on a verdict. The streaks that led there are over, so every
     * policy plugin starts the agent over: a continue must not run into another plugin's stale count.
     */
    'policy/settled'(agent: Agent, settlement: PolicySettlement): void
  }
}
