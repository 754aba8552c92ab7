import type { Agent } from '@goalkeeper/agent-loop'
import type { BudgetReached } from './budgets.ts'
import type { GoalError } from './errors.ts'

export type GoalPhase = 'active' | 'paused' | 'blocked' | 'complete'
export type GoalActivation = 'armed' | 'disarmed'

/** How `blockRound` ends the round it blocked. */
export interface BlockRoundOptions {
  /** Who stopped the round: `denied.by` of the tool calls refused after the block (default `goal`). */
  by?: string
  /** Leave the turn one more model call, a text-only wrap-up (the caller steers what it should say). */
  wrapUp?: boolean
}

export interface BlockedReason {
  /** lower-kebab-case */
  code: string
  message: string
}

/** Limits a human sets on a goal besides its round cap; each is optional and positive. */
export interface GoalBudgets {
  /** Codex's accounting: input tokens minus cached input, plus output tokens, over every model call of the goal's rounds. */
  tokens?: number
  /** US dollars, from the price table of the model that answered. */
  costUsd?: number
  /** Wall time spent in the goal's rounds, in ms. */
  activeTimeMs?: number
}

/** What the goal's rounds have spent: the fold of its `goal/usage` records. */
export interface GoalSpend {
  tokens: number
  /** null once any call had no known price: unknown, never guessed as zero. */
  costUsd: number | null
  activeTimeMs: number
  /** Model calls counted. */
  calls: number
}

/** Data of a `goal/usage` record: one model call of a goal round and what it cost. */
export interface GoalUsage {
  goalId: string
  round: number
  turn: number
  step: number
  /** input - cachedInput + output, as reported by the provider (0 when it reported nothing). */
  tokens: number
  costUsd: number | null
  /** Wall time of the step (the model call and its tools), in ms. */
  activeTimeMs: number
}

/** One metered model step of a turn: `recordUsage` finds the goal round the turn is. */
export type StepUsage = Omit<GoalUsage, 'goalId' | 'round'>

/** Asks `recordUsage` to stop the round once a budget is used up (`blockRound`'s options). */
export type BudgetStop = BlockRoundOptions

/** What `recordUsage` counted and what it means for the goal's budgets. */
export interface UsageReport {
  /** The goal with its new spend (blocked, when this call stopped it). */
  goal: GoalState
  /** Every budget used up after this call (`budgetsReached`); empty while none is. */
  reached: BudgetReached[]
  /**
   * This call stopped the round: with a `stop` asked for and a budget reached, the goal was blocked
   * `budget-limited` (or already was, by an edit made during the step) and the round winds down.
   */
  stopped: boolean
}

/** Data of a `goal/check` record: one run of the goal's check when a completion was asked for. */
export interface GoalCheckRecord {
  goalId: string
  /** The command that decided: the first that failed, or the last one when all passed. */
  command: string
  ok: boolean
  exitCode: number | null
  /** The tail of its output (at most 2000 characters, secrets already masked). */
  output: string
}

/** The fold of a goal's `goal/check` records. */
export interface GoalVerification {
  attempts: number
  failures: number
  last: { command: string; ok: boolean; exitCode: number | null }
}

/** What a judge decided: the objective is met, is not, or cannot be told from the evidence. */
export type JudgeVerdict = 'met' | 'not-met' | 'cannot-tell'

/** Data of a `goal/judgement` record: one judge call on a completion (or on a failed call, as "cannot-tell"). */
export interface GoalJudgementRecord {
  goalId: string
  /** The model entry that judged. */
  judge: string
  verdict: JudgeVerdict
  /** Whether the completion stood on it: "met", or "cannot-tell" under a rule that accepts it. */
  accepted: boolean
  reasons: string[]
  missing: string[]
  /** The workspace's change since the goal began, as the judge saw it; null outside a git work tree. */
  diff: { summary: string; sha256: string } | null
}

/** The fold of a goal's `goal/judgement` records. */
export interface GoalJudgement {
  attempts: number
  /** Judgements since the last accepted one that did not accept: the rejection bound counts these. */
  rejectionsInARow: number
  last: Omit<GoalJudgementRecord, 'goalId'>
}

/** One check command as a judge reads it. */
export interface CheckEvidence {
  command: string
  ok: boolean
  exitCode: number | null
  /** The tail of its output, secrets already masked. */
  output: string
}

/**
 * The judge's side of a completion: asked by the goal tool once every check passed, with what the
 * model cannot change afterwards. `stands: false` carries the text the model reads.
 */
/** A round of a condition goal that ended and settled to go on (`goal/round-ended`). */
export interface GoalRoundEnded {
  goalId: string
  revision: number
  round: number
  turn: number
  /** Aborted when the driver unloads. */
  signal: AbortSignal
}

export interface GoalJudgeService {
  /**
   * `claimed: false` is the review of a condition goal after a round in which the model did not call
   * complete: a "not met" then only means "not done yet", so it never blocks the goal at the rejection bound.
   */
  review(agent: Agent, goal: GoalState, input: { turn: number; step: number; cwd: string; checks: CheckEvidence[]; signal?: AbortSignal; claimed?: boolean }): Promise<{ stands: true } | { stands: false; message: string; code: string }>
}

export interface Goal {
  id: string
  objective: string
  phase: GoalPhase
  revision: number
  maxGoalRounds: number
  roundsStarted: number
  blockedReason?: BlockedReason
  /** Present only when a budget was set. */
  budgets?: GoalBudgets
  /** Present once a model call of the goal was counted. */
  spent?: GoalSpend
  /** Shell commands that must pass before the model's completion stands; present only when set. */
  verify?: string[]
  /**
   * A condition goal (`goal --until`): the judge is asked after every round, whether or not the model called
   * complete, and the goal completes when it says met and every check passes. Set at create only.
   */
  until?: string
  /** Present once the check ran. */
  verification?: GoalVerification
  /** Present once a judge decided on a completion. */
  judgement?: GoalJudgement
  /** Present on a goal a person completed (`/goal complete`): neither check nor judge was asked. */
  completedBy?: 'person'
  createdAt: number
  updatedAt: number
}

/** A goal as `get` returns it: the persisted fold plus the process-local activation. */
export interface GoalState extends Goal {
  activation: GoalActivation
}

/**
 * One goal round's identity. The source of its `user/message` is this plus `kind: 'goal'`; the goal
 * package, the round driver and the goal tool all name a round with this one type.
 */
export interface GoalRound {
  goalId: string
  revision: number
  round: number
}

/** Compare-and-set fence: every mutation names the revision it expects. */
export interface GoalRef {
  id: string
  revision: number
}

export type GoalOperation = 'create' | 'edit' | 'pause' | 'resume' | 'complete' | 'block' | 'clear'

/**
 * Data of a `goal/change` session record: the full post-mutation snapshot, or for clear a tombstone
 * naming the goal it removed. Nothing about activation is ever part of it.
 */
export type GoalChangeData =
  | { op: Exclude<GoalOperation, 'clear'>; goal: Goal }
  | { op: 'clear'; goal: null; cleared: GoalRef }

/** Payload of `goal/changed`. */
export interface GoalChange {
  op: GoalOperation
  /** Seq of the `goal/change` record. */
  seq: number
  /** State after the mutation; undefined after clear. */
  goal: Goal | undefined
  previous: Goal | undefined
}

export type GoalErrorCode =
  | 'GOAL_NOT_FOUND'
  | 'GOAL_STALE_REVISION'
  | 'GOAL_INVALID_TRANSITION'
  | 'GOAL_ALREADY_EXISTS'
  | 'GOAL_INVALID_OBJECTIVE'
  | 'GOAL_INVALID_MAX_ROUNDS'
  | 'GOAL_INVALID_BLOCK_REASON'
  | 'GOAL_ROUND_LIMIT'
  | 'GOAL_CORRUPT_LOG'
  | 'GOAL_NO_AGENT'
  | 'GOAL_BUSY'
  | 'GOAL_INVALID_BUDGET'
  | 'GOAL_BUDGET_LIMIT'
  | 'GOAL_INVALID_USAGE'
  | 'GOAL_INVALID_CHECK'
  | 'GOAL_INVALID_JUDGEMENT'

/** Anything with the agent's id (an Agent, or a tool's view of it). */
export interface AgentRef {
  readonly id: string
}

/**
 * Whether the goal log of an agent can be trusted. A corrupt log (`GOAL_CORRUPT_LOG`, naming the first bad
 * record's seq) makes `get` answer undefined and every mutation throw; this is where the reason is read.
 */
export type GoalHealth = { ok: true } | { ok: false; error: GoalError }

export interface GoalService {
  /**
   * The current goal with its activation; undefined when the session has no goal, when its goal log is
   * corrupt (see `health`), or when the agent is not live in this process. Never throws.
   */
  get(agent: AgentRef): GoalState | undefined
  /** `{ ok: false, error }` once the agent's goal log is corrupt; `{ ok: true }` otherwise (also for an agent not live here). */
  health(agent: AgentRef): GoalHealth
  create(agent: AgentRef, input: { objective: string; maxGoalRounds?: number; budgets?: GoalBudgets; verify?: string[]; until?: string }): GoalState
  /** `budgets` is merged into the goal's: a key given replaces that budget, the others stay. `verify: []` removes the check. */
  edit(agent: AgentRef, ref: GoalRef, input: { objective?: string; maxGoalRounds?: number; budgets?: GoalBudgets; verify?: string[] }): GoalState
  pause(agent: AgentRef, ref: GoalRef): GoalState
  resume(agent: AgentRef, ref: GoalRef): GoalState
  /** `by: 'person'` records a person's decision (`/goal complete`); the model's completions go through the goal tool. */
  complete(agent: AgentRef, ref: GoalRef, options?: { by?: 'person' }): GoalState
  block(agent: AgentRef, ref: GoalRef, reason: BlockedReason): GoalState
  clear(agent: AgentRef, ref: GoalRef): void
  /** Drops process-local authority only: no record, no revision change, no `goal/changed`. */
  disarm(agent: AgentRef): void
  /**
   * The goal round `turn` is, read from the session log (the source of the goal-sourced message admitted
   * in that turn); undefined for a turn that was not a round, an unknown turn or an agent not live here.
   */
  roundOf(agent: AgentRef, turn: number): GoalRound | undefined
  /**
   * Blocks the goal if and only if `turn` is a round of the live goal (same id and revision, still
   * active) and returns the new state; otherwise writes nothing and returns undefined. An over-long
   * message is clipped rather than refused; a malformed reason still throws `GOAL_INVALID_BLOCK_REASON`.
   * A block that lands also ends the round (`agent.wrapUp`): no further tool call of the turn runs (each
   * is refused with the block as the reason), and no further model call is made, unless `options.wrapUp`
   * leaves one text-only wrap-up step.
   */
  blockRound(agent: AgentRef, turn: number, reason: BlockedReason, options?: BlockRoundOptions): GoalState | undefined
  /**
   * Counts one model call of the current round: appends a `goal/usage` record and reports the goal with its
   * new spend and the budgets now used up. Not a mutation: no revision, no `goal/changed`. Given a
   * `GoalUsage`, the round it names must be the current one (`GOAL_INVALID_USAGE` otherwise); given a
   * `StepUsage`, the goal package finds the round of `usage.turn` and counts nothing (undefined) unless it is
   * the live goal's current round. With `stop`, a budget used up blocks the round `budget-limited`
   * (`blockRound` with those options), so a meter makes one call per step.
   */
  recordUsage(agent: AgentRef, usage: GoalUsage, stop?: BudgetStop): UsageReport
  recordUsage(agent: AgentRef, usage: StepUsage, stop?: BudgetStop): UsageReport | undefined
  /** Records one run of the goal's check (`goal/check`); not a mutation: no revision, no `goal/changed`. */
  recordCheck(agent: AgentRef, check: GoalCheckRecord): GoalState
  /** Records one judge decision on a completion (`goal/judgement`); not a mutation: no revision, no `goal/changed`. */
  recordJudgement(agent: AgentRef, judgement: GoalJudgementRecord): GoalState
}

declare module 'cordis' {
  interface Context {
    /** The goal domain (section 7). */
    goals: GoalService
    /** The completion judge, when one is configured (`packages/goal-judge`). */
    goalJudge: GoalJudgeService
  }
  interface Events {
    /** Isolated, after each mutation's `goal/change` record. */
    'goal/changed'(agent: Agent, change: GoalChange): void
    /** Isolated and process-local: the goal was armed or disarmed (never written). */
    'goal/activation'(agent: Agent, activation: GoalActivation): void
    /**
     * Awaited by the round driver (`ctx.parallel`) after a round of a condition goal (`until`) settled to go on,
     * before the next round is reserved: tool-goal runs the checks and asks the judge here.
     */
    'goal/round-ended'(agent: Agent, round: GoalRoundEnded): Promise<void> | void
  }
}

declare module '@goalkeeper/session' {
  interface RecordData {
    /** Every goal mutation: the full snapshot after it, or a tombstone for clear (the goal's fold replays them). */
    'goal/change': GoalChangeData
    /** One model call of a goal round and what it cost (`recordUsage`). */
    'goal/usage': GoalUsage
    /** One run of the goal's check when a completion was asked for (`recordCheck`). */
    'goal/check': GoalCheckRecord
    /** One judge decision on a completion (`recordJudgement`, written by the goal judge). */
    'goal/judgement': GoalJudgementRecord
  }
}
