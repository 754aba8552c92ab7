import type { Agent } from '@goalkeeper/agent-loop'
import type { PolicyEscalation, PolicyVerdict } from '@goalkeeper/policy'

/** One failed tool call that counted as a mistake. */
export interface MistakeFailure {
  step: number
  tool: string
  code: string
  message: string
}

/** What a `mistake-limit/reached` listener is told. */
export interface MistakeLimitState {
  turn: number
  /** The step that reached the limit; absent for a policy escalation, which names only its turn. */
  step?: number
  /** Consecutive mistake steps; equals `limit` when a policy escalation forced the limit. */
  count: number
  limit: number
  /**
   * `tool-failures`: the consecutive count reached `limit`; `failure-window`: `windowLimit` of the last `window`
   * judged steps were mistakes; `stale-failures`: `staleFailures` calls failed in the turn since the last success
   * that changed anything; `policy-escalation`: another policy (loop-guard) escalated.
   */
  cause: 'tool-failures' | 'failure-window' | 'stale-failures' | 'policy-escalation'
  /** The mistake steps among the last `size` judged steps when the limit was reached. */
  window: { failed: number; size: number; limit: number }
  /** The counted failures of the most recent mistake step(s), oldest first (at most 10); for `stale-failures`, the stale run's. */
  failures: MistakeFailure[]
  /** `stale-failures`: the failed calls and all calls since the last success that changed anything, in this turn. */
  stale?: { failures: number; calls: number; limit: number }
  /** Set when `cause` is `policy-escalation`. */
  escalation?: PolicyEscalation
}

/** A listener's answer: continue (the guidance is steered into the conversation) or stop. */
export type MistakeLimitDecision = PolicyVerdict

declare module 'cordis' {
  interface Events {
    /**
     * The limit was reached. Dispatched as an awaited bail: the first listener that returns a decision
     * rules; no decision, a throwing listener or no answer within `decisionTimeoutMs` means stop.
     */
    'mistake-limit/reached'(agent: Agent, state: MistakeLimitState): MistakeLimitDecision | undefined | Promise<MistakeLimitDecision | undefined>
  }
}
