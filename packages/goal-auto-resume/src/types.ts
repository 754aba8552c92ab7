import type { Agent } from '@goalkeeper/agent-loop'

/** What the plugin tells hosts (`goal/auto-resume`), so a wait is never silent. */
export type AutoResumeNotice =
  /** A resume is armed: it will happen at `at` (epoch ms), try `attempt` of `maxTries`. */
  | { kind: 'scheduled'; goalId: string; at: number; waitMs: number; attempt: number; maxTries: number }
  | { kind: 'resumed'; goalId: string; attempt: number }
  /** Human input, a goal change, a pause or the plugin's unload ended the wait. */
  | { kind: 'cancelled'; goalId: string; why: string }
  /** No resume: the tries are used up, or the announced wait is longer than allowed. */
  | { kind: 'declined'; goalId: string; why: string }

export interface PendingResume {
  goalId: string
  at: number
  attempt: number
  maxTries: number
}

export interface GoalAutoResume {
  /** Opts one agent in (the CLI's `--auto-resume`), when the plugin's `enabled` is off. */
  enable(agent: { id: string }): void
  /** The resume waiting for this agent, if any. */
  pending(agent: { id: string }): PendingResume | undefined
  /** Ends a waiting resume (a person took over); no-op without one. */
  cancel(agent: { id: string }, why: string): void
}

declare module 'cordis' {
  interface Context {
    /** Resumes a goal blocked usage-limited after the reset (section 13). */
    goalAutoResume: GoalAutoResume
  }
  interface Events {
    /** Isolated: a resume after a usage limit was scheduled, made, cancelled or declined. */
    'goal/auto-resume'(agent: Agent, notice: AutoResumeNotice): void
  }
}
