import type { PlanEntry } from '@agentclientprotocol/sdk'
import { addCheck, addJudgement, addUsage, describeGoalStatus, describePhase, describeVerification, describeTurnOutcome, GOAL_CHANGE_RECORD, GOAL_CHECK_RECORD, GOAL_JUDGEMENT_RECORD, GOAL_USAGE_RECORD, isGoalSourced, isLimitCode, isRunnable, tokensOf, type Goal, type GoalBudgets, type GoalJudgement, type GoalSpend, type GoalState, type GoalVerification } from '@goalkeeper/goal'
import { clip } from '@goalkeeper/kit'
import { isRecordOf, type SessionRecord, type TurnOutcome } from '@goalkeeper/session'

/** The extension method that reads and changes a session's goal (see README: "Goals over ACP"). */
export const GOAL_METHOD = '_goalkeeper/goal'
export const GOAL_EXTENSION_VERSION = 1
export const GOAL_ACTIONS = ['get', 'set', 'edit', 'pause', 'resume', 'clear'] as const

/** One goal round as the session log tells it. */
export interface RoundView {
  round: number
  max: number
  turn: number
  /** How its turn ended; absent while it runs. */
  outcome?: TurnOutcome
}

/**
 * The goal as a client sees it, in `session_info_update._meta.goal` and in the extension's answers. The field
 * names follow codex-acp's goal snapshot where they mean the same (`objective`, `status`, `iterations`,
 * `tokensUsed`, `controlMethod`), so a client made for that one reads this one too; the rest is goalkeeper's.
 */
export interface GoalSnapshot {
  controlMethod: typeof GOAL_METHOD
  id: string
  objective: string
  /** codex-acp's vocabulary: `limited` is a goal blocked by its round cap, its budget or usage limits. */
  status: 'active' | 'paused' | 'blocked' | 'limited' | 'complete'
  phase: Goal['phase']
  /** Process-local: armed means rounds run on their own. Never written to the session log. */
  activation: 'armed' | 'disarmed'
  revision: number
  /** Rounds started, and the cap. */
  roundsStarted: number
  maxRounds: number
  iterations: number
  blockedReason: { code: string; message: string } | null
  lastReason: string | null
  /** The latest round: its number and, once its turn ended, how (`completed`, `aborted`, `error`, ...). */
  lastRound: { round: number; state: 'running' | 'ended'; outcome?: string; code?: string } | null
  /** Tokens the model used in this goal's rounds (summed from the session log). */
  usage: { inputTokens: number; outputTokens: number }
  /** The same calls counted by the goal package's one token rule (`tokensOf`: input - cached input + output), as budgets count them. */
  tokensUsed: number
  /** The goal's budgets (tokens, costUsd, activeTimeMs), null when none is set. */
  budgets: GoalBudgets | null
  /** What its rounds spent as the budgets count it (Codex's token accounting; `costUsd` null when a price is unknown). */
  spent: GoalSpend | null
  /** A goal defined by a condition (`until`): the judge decides after every round whether it is met; null otherwise. */
  until: string | null
  /** The check a completion must pass, and how it went so far; null when there is none. */
  verify: string[] | null
  verification: GoalVerification | null
  /** The completion judge's decisions so far (the last one, and refusals in a row); null before any. */
  judgement: GoalJudgement | null
  /** What a complete goal stood on (`verified: npm test passed; judged met by cheap`, `completed by a person`, `not verified`); null until complete. */
  completedOn: string | null
  /**
   * The goal's state with its evidence, as every front end words it (`describeGoalStatus`): `complete
   * (verified: 2 checks passed; judged met by cheap)`, `active (armed); not complete: judged not met by
   * cheap: ...`, or the phase alone.
   */
  statusText: string
  createdAt: number
  updatedAt: number
}

/** How a round's turn ended for a plan entry: the outcome as every front end words it, `running` until then. */
export function describeOutcome(outcome: TurnOutcome | undefined): string {
  return outcome ? describeTurnOutcome(outcome) : 'running'
}

/** Rounds listed one by one in the plan; older ones are summed up in one entry. */
const PLAN_ROUNDS = 8

/**
 * The current goal, its rounds and their token usage, folded from the session records in order (live and
 * when a saved session is replayed alike). Goal state itself is the goal package's `goal/change` snapshot.
 */
export class GoalView {
  goal: Goal | undefined
  rounds: RoundView[] = []
  private usage = { inputTokens: 0, outputTokens: 0 }
  private tokens = 0
  private openTurn: number | undefined
  private roundTurn: number | undefined

  /** Takes one record; returns whether what a client sees of the goal changed. */
  observe(record: SessionRecord): boolean {
    if (isRecordOf(record, GOAL_CHANGE_RECORD)) {
      const data = record.data
      const next = data.goal ?? undefined
      if (next?.id !== this.goal?.id) {
        this.rounds = []
        this.usage = { inputTokens: 0, outputTokens: 0 }
        this.tokens = 0
      }
      this.goal = next
      return true
    }
    if (isRecordOf(record, GOAL_USAGE_RECORD)) {
      // Spend moves without a goal change: fold it as the goal package does, so budgets show live.
      const usage = record.data
      if (!this.goal || usage.goalId !== this.goal.id) return false
      this.goal = { ...this.goal, spent: addUsage(this.goal.spent, usage) }
      return true
    }
    // A check run or a judge's decision is evidence a client shows at once, not at the next goal change.
    if (isRecordOf(record, GOAL_CHECK_RECORD)) {
      if (!this.goal || record.data.goalId !== this.goal.id) return false
      this.goal = { ...this.goal, verification: addCheck(this.goal.verification, record.data) }
      return true
    }
    if (isRecordOf(record, GOAL_JUDGEMENT_RECORD)) {
      if (!this.goal || record.data.goalId !== this.goal.id) return false
      this.goal = { ...this.goal, judgement: addJudgement(this.goal.judgement, record.data) }
      return true
    }
    if (isRecordOf(record, 'turn/start')) {
      this.openTurn = record.data.turn
      this.roundTurn = undefined
      return false
    }
    if (isRecordOf(record, 'user/message')) {
      const message = record.data
      if (!isGoalSourced(message) || !this.goal || message.source.goalId !== this.goal.id || this.openTurn === undefined) return false
      this.roundTurn = this.openTurn
      this.rounds.push({ round: message.source.round, max: this.goal.maxGoalRounds, turn: this.openTurn })
      // A round is started by its admission, which writes no goal change: the last snapshot recorded
      // before it (the create, a resume) still says one round less, as after a crash in that round.
      if (message.source.round > this.goal.roundsStarted) this.goal = { ...this.goal, roundsStarted: message.source.round }
      return true
    }
    if (isRecordOf(record, 'assistant/message')) {
      if (this.roundTurn === undefined || record.data.turn !== this.roundTurn || !record.data.usage) return false
      this.usage.inputTokens += record.data.usage.inputTokens
      this.usage.outputTokens += record.data.usage.outputTokens
      this.tokens += tokensOf(record.data.usage)
      return false
    }
    if (isRecordOf(record, 'turn/end')) {
      const round = this.rounds.find((item) => item.turn === record.data.turn)
      if (this.openTurn === record.data.turn) this.openTurn = this.roundTurn = undefined
      if (!round) return false
      round.outcome = record.data.outcome
      return true
    }
    return false
  }

  snapshot(live: GoalState | undefined): GoalSnapshot | null {
    const goal = this.goal
    if (!goal) return null
    // The live goal, when there is one, has the activation; the fold has everything else, identical.
    const activation = live?.id === goal.id ? live.activation : 'disarmed'
    const last = this.rounds.at(-1)
    const limited = goal.phase === 'blocked' && isLimitCode(goal.blockedReason?.code)
    return {
      controlMethod: GOAL_METHOD,
      id: goal.id,
      objective: goal.objective,
      status: limited ? 'limited' : goal.phase,
      phase: goal.phase,
      activation,
      revision: goal.revision,
      roundsStarted: goal.roundsStarted,
      maxRounds: goal.maxGoalRounds,
      iterations: goal.roundsStarted,
      blockedReason: goal.blockedReason ?? null,
      lastReason: goal.blockedReason?.message ?? null,
      lastRound: last
        ? {
            round: last.round,
            state: last.outcome ? 'ended' : 'running',
            ...(last.outcome ? { outcome: last.outcome.kind } : {}),
            ...(last.outcome?.kind === 'error' ? { code: last.outcome.code } : {}),
          }
        : null,
      usage: { ...this.usage },
      tokensUsed: this.tokens,
      budgets: goal.budgets ?? null,
      spent: goal.spent ?? null,
      until: goal.until ?? null,
      verify: goal.verify ?? null,
      verification: goal.verification ?? null,
      judgement: goal.judgement ?? null,
      completedOn: goal.phase === 'complete' ? describeVerification(goal) : null,
      statusText: describeGoalStatus({ ...goal, activation }),
      createdAt: goal.createdAt,
      updatedAt: goal.updatedAt,
    }
  }

  /** The goal and its rounds as an ACP plan: the objective first, then each round and how it settled. */
  plan(live: GoalState | undefined): PlanEntry[] {
    const goal = this.goal
    if (!goal) return []
    const activation = live?.id === goal.id ? live.activation : 'disarmed'
    const entries: PlanEntry[] = [{
      content: `Goal, ${describePhase({ ...goal, activation })}: ${clip(goal.objective, 300)}`,
      priority: 'high',
      status: goal.phase === 'complete' ? 'completed' : goal.phase === 'active' ? 'in_progress' : 'pending',
    }]
    const shown = this.rounds.slice(-PLAN_ROUNDS)
    const hidden = this.rounds.length - shown.length
    if (hidden > 0) entries.push({ content: `Rounds 1-${hidden}: ended`, priority: 'low', status: 'completed' })
    for (const round of shown) {
      entries.push({
        content: `Round ${round.round}/${round.max}: ${describeOutcome(round.outcome)}`,
        priority: 'medium',
        status: round.outcome ? 'completed' : 'in_progress',
      })
    }
    const running = shown.at(-1) && !shown.at(-1)!.outcome
    if (isRunnable({ phase: goal.phase, activation }) && !running && goal.roundsStarted < goal.maxGoalRounds) {
      entries.push({ content: `Round ${goal.roundsStarted + 1}/${goal.maxGoalRounds}: next`, priority: 'medium', status: 'pending' })
    }
    return entries
  }
}
