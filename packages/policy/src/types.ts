import type { Agent } from '@goalkeeper/agent-loop'

/** What a policy plugin escalates (DESIGN.md section 10). */
export interface PolicyEscalation {
  source: string
  code: string
  message: string
  turn: number
}

/**
 * A policy plugin acted on a verdict for `turn`: it steered guidance (`continue`) or stopped the turn
 * (`stop`). Every policy plugin starts the agent over on it.
 */
export interface PolicySettlement {
  source: string
  turn: number
  action: 'continue' | 'stop'
}

export type PolicyVerdict =
  | { action: 'continue'; guidance?: string }
  | { action: 'stop'; reason?: string }

declare module 'cordis' {
  interface Events {
    /** Bail: a policy plugin escalates; the first listener that returns a verdict rules. */
    'policy/escalate'(agent: Agent, escalation: PolicyEscalation): PolicyVerdict | undefined | Promise<PolicyVerdict | undefined>
    /**
     * Isolated, after a policy plugin acted on a verdict. The streaks that led there are over, so every
     * policy plugin starts the agent over: a continue must not run into another plugin's stale count.
     */
    'policy/settled'(agent: Agent, settlement: PolicySettlement): void
  }
}
