import { randomUUID } from 'node:crypto'
import type { Context } from 'cordis'
import type { Agent } from '@goalkeeper/agent-loop'
import { cloneData, dispatchIsolated, untraced } from '@goalkeeper/kit'
import type { Session } from '@goalkeeper/session'
import { GoalError } from './errors.ts'
import { GOAL_CHANGE_RECORD, GoalFold, type GoalFoldPart, usageViolation } from './fold.ts'
import { roundOfTurn } from './rounds.ts'
import { checkClear, transition, type TransitionArgs } from './transitions.ts'
import { budgetsReached, GOAL_USAGE_RECORD } from './budgets.ts'
import { BUDGET_BLOCK_CODE } from './block-codes.ts'
import { checkViolation, GOAL_CHECK_RECORD } from './checks.ts'
import { GOAL_JUDGEMENT_RECORD, judgementViolation } from './judgements.ts'
import type { AgentRef, BlockedReason, BlockRoundOptions, Goal, GoalActivation, GoalBudgets, GoalCheckRecord, GoalChangeData, GoalJudgementRecord, GoalHealth, GoalOperation, GoalRef, GoalRound, GoalService, GoalState, GoalUsage, BudgetStop, StepUsage, UsageReport } from './types.ts'
import { clipBlockReason, normalizeBlockReason } from './validate.ts'
import { roundStopText } from './round-stop.ts'
import { isRunnable } from './status.ts'

export interface GoalConfig {
  defaultMaxGoalRounds: number
  /** Check commands of a goal created without any (this workspace's tests, say). */
  defaultVerify?: string[]
}

/** What this process knows about one agent's session: its fold and the never-persisted activation. */
interface Tracked {
  session: Session
  fold: GoalFold
  activation: GoalActivation
  /** A `goal/change` record is being appended: its `session/event` listeners run now. */
  appending: boolean
}

type Build = (prev: Goal | undefined, now: number, tracked: Tracked) => Goal | undefined

/** `ctx.goals`. Every mutation is synchronous from read to append, so nothing can interleave with it. */
export class GoalRegistry implements GoalService {
  private readonly tracked = new Map<string, Tracked>()
  /**
   * Taken once: `agents` is injected, so it outlives this registry, and every `ctx.agents` read goes through
   * Cordis's context proxy (tens of microseconds), several times a step.
   */
  private readonly agents: Context['agents']

  constructor(private readonly ctx: Context, private readonly config: GoalConfig) {
    // Without the tracing proxy too: `get` is a map lookup, asked at every question and mutation.
    this.agents = untraced(ctx.agents)
  }

  get(agent: AgentRef): GoalState | undefined {
    const tracked = this.lookup(agent)
    const goal = tracked && !tracked.fold.error ? tracked.fold.current : undefined
    return goal && toState(goal, tracked!.activation)
  }

  health(agent: AgentRef): GoalHealth {
    const error = this.lookup(agent)?.fold.error
    return error ? { ok: false, error } : { ok: true }
  }

  create(agent: AgentRef, input: { objective: string; maxGoalRounds?: number; budgets?: GoalBudgets; verify?: string[]; until?: string }): GoalState {
    return this.mutate(agent, undefined, 'create', 'armed', (prev, now) => transition(prev, 'create', {
      now,
      id: randomUUID(),
      objective: input?.objective,
      maxGoalRounds: input?.maxGoalRounds,
      budgets: input?.budgets,
      verify: input?.verify,
      until: input?.until,
      defaultVerify: this.config.defaultVerify,
      defaultMaxGoalRounds: this.config.defaultMaxGoalRounds,
    }))!
  }

  edit(agent: AgentRef, ref: GoalRef, input: { objective?: string; maxGoalRounds?: number; budgets?: GoalBudgets; verify?: string[] }): GoalState {
    return this.simple(agent, ref, 'edit', 'keep', { objective: input?.objective, maxGoalRounds: input?.maxGoalRounds, budgets: input?.budgets, verify: input?.verify })
  }

  recordCheck(agentRef: AgentRef, check: GoalCheckRecord): GoalState {
    const { agent, tracked } = this.track(agentRef)
    const prev = tracked.fold.current
    const data: GoalCheckRecord = { goalId: check?.goalId, command: check?.command, ok: check?.ok, exitCode: check?.exitCode, output: check?.output }
    const violation = checkViolation(prev, data)
    if (violation) throw new GoalError('GOAL_INVALID_CHECK', `Cannot record this check: ${violation}.`)
    agent.session.append(GOAL_CHECK_RECORD, data)
    tracked.fold.catchUp(agent.session.records)
    return toState(tracked.fold.current!, tracked.activation)
  }

  recordJudgement(agentRef: AgentRef, judgement: GoalJudgementRecord): GoalState {
    const { agent, tracked } = this.track(agentRef)
    const j = judgement
    const data: GoalJudgementRecord = { goalId: j?.goalId, judge: j?.judge, verdict: j?.verdict, accepted: j?.accepted, reasons: j?.reasons, missing: j?.missing, diff: j?.diff }
    const violation = judgementViolation(tracked.fold.current, data)
    if (violation) throw new GoalError('GOAL_INVALID_JUDGEMENT', `Cannot record this judgement: ${violation}.`)
    agent.session.append(GOAL_JUDGEMENT_RECORD, data)
    tracked.fold.catchUp(agent.session.records)
    return toState(tracked.fold.current!, tracked.activation)
  }

  recordUsage(agentRef: AgentRef, usage: GoalUsage, stop?: BudgetStop): UsageReport
  recordUsage(agentRef: AgentRef, usage: StepUsage, stop?: BudgetStop): UsageReport | undefined
  recordUsage(agentRef: AgentRef, usage: GoalUsage | StepUsage, stop?: BudgetStop): UsageReport | undefined {
    const { agent, tracked } = this.track(agentRef)
    const prev = tracked.fold.current
    let identity: Pick<GoalUsage, 'goalId' | 'round'> | undefined = 'goalId' in (usage ?? {}) ? usage as GoalUsage : undefined
    if (!identity) {
      // Only a round of the live goal is counted, and only its current one: anything else is not a round's call.
      const round = this.roundOf(agent, usage?.turn)
      if (!round || tracked.fold.error || prev?.id !== round.goalId || prev.roundsStarted !== round.round) return undefined
      identity = round
    }
    const data: GoalUsage = { goalId: identity.goalId, round: identity.round, turn: usage?.turn, step: usage?.step, tokens: usage?.tokens, costUsd: usage?.costUsd, activeTimeMs: usage?.activeTimeMs }
    // The fold's own rule, checked before anything is written: a bad call throws instead of poisoning the log.
    const violation = usageViolation(prev, data)
    if (violation) throw new GoalError('GOAL_INVALID_USAGE', `Cannot count this model call: ${violation}.`)
    agent.session.append(GOAL_USAGE_RECORD, data)
    tracked.fold.catchUp(agent.session.records)
    const goal = toState(tracked.fold.current!, tracked.activation)
    const reached = budgetsReached(goal)
    if (!stop || !reached.length) return { goal, reached, stopped: false }
    return this.stopOverBudget(agent, data.turn, goal, reached, stop)
  }

  /** A budget is used up in the round `turn` is: the round stops, unless another stop came first. */
  private stopOverBudget(agent: Agent, turn: number, goal: GoalState, reached: UsageReport['reached'], stop: BudgetStop): UsageReport {
    const reason = { code: BUDGET_BLOCK_CODE, message: reached[0].message }
    if (goal.phase === 'active') {
      const blocked = this.blockRound(agent, turn, reason, stop)
      return { goal: blocked ?? goal, reached, stopped: !!blocked }
    }
    // Blocked over budget during this step (a budget lowered by an edit): the round winds down all the same.
    if (goal.blockedReason?.code !== BUDGET_BLOCK_CODE) return { goal, reached, stopped: false }
    agent.wrapUp(turn, { by: stop.by?.trim() || 'goal', reason: roundStopText(reason), modelCalls: stop.wrapUp ? 1 : 0 })
    return { goal, reached, stopped: true }
  }

  pause(agent: AgentRef, ref: GoalRef): GoalState {
    return this.simple(agent, ref, 'pause', 'disarmed', {})
  }

  resume(agent: AgentRef, ref: GoalRef): GoalState {
    return this.mutate(agent, ref, 'resume', 'armed', (prev, now, tracked) => {
      if (isRunnable(prev && { phase: prev.phase, activation: tracked.activation })) {
        // Worded without "armed": the message can reach a session file as a tool result, and activation never may.
        throw new GoalError('GOAL_INVALID_TRANSITION', 'The goal is already active and its rounds are running; there is nothing to resume.')
      }
      return transition(prev, 'resume', { now })
    })!
  }

  complete(agent: AgentRef, ref: GoalRef, options: { by?: 'person' } = {}): GoalState {
    return this.simple(agent, ref, 'complete', 'disarmed', options?.by === 'person' ? { completedBy: 'person' } : {})
  }

  block(agent: AgentRef, ref: GoalRef, reason: BlockedReason): GoalState {
    return this.simple(agent, ref, 'block', 'disarmed', { reason })
  }

  clear(agent: AgentRef, ref: GoalRef): void {
    this.mutate(agent, ref, 'clear', 'disarmed', (prev) => {
      checkClear(prev)
      return undefined
    })
  }

  disarm(agent: AgentRef): void {
    const live = this.live(agent)
    const tracked = live && this.tracked.get(live.id)
    if (!live || !tracked) return
    this.setActivation(live, tracked, 'disarmed')
  }

  roundOf(agent: AgentRef, turn: number): GoalRound | undefined {
    const live = this.live(agent)
    return live && roundOfTurn(live.session.records, turn)
  }

  blockRound(agent: AgentRef, turn: number, reason: BlockedReason, options: BlockRoundOptions = {}): GoalState | undefined {
    // Checked first, so a malformed reason fails the same way whether or not the turn is a round.
    const checked = normalizeBlockReason(clipBlockReason(reason))
    const round = this.roundOf(agent, turn)
    if (!round) return undefined
    // A corrupt log has no trustworthy live goal, so there is nothing to block (the fold already warned).
    const live = this.get(agent)
    if (live?.id !== round.goalId || live.revision !== round.revision || live.phase !== 'active') return undefined
    const blocked = this.block(agent, { id: live.id, revision: live.revision }, checked)
    // The stop holds for the rest of the round: no tool call runs, and no model call follows unless a
    // wrap-up was asked for. A turn already over has nothing left to hold.
    this.live(agent)?.wrapUp(turn, { by: options.by?.trim() || 'goal', reason: roundStopText(checked), modelCalls: options.wrapUp ? 1 : 0 })
    return blocked
  }

  /** An agent started or went away: whatever this process knew about its session, activation included, is dropped. */
  forget(agent: Agent): void {
    this.tracked.delete(agent.id)
  }

  /** Keeps the fold incremental; also reports a log that just became corrupt. */
  /** The goal fold of the agent on `session`, caught up, as a checkpoint keeps it; undefined without such an agent. */
  checkpointPart(session: Session): GoalFoldPart | undefined {
    const agent = this.agents.get(session.id)
    if (!agent || agent.session !== session) return undefined
    return this.lookup(agent)!.fold.part()
  }

  observe(session: Session): void {
    const tracked = this.tracked.get(session.id)
    if (!tracked || tracked.session !== session) return
    const healthy = !tracked.fold.error
    tracked.fold.catchUp(session.records)
    if (healthy && tracked.fold.error) {
      this.ctx.logger('goal').warn('session %s: %s', session.id, tracked.fold.error.message)
    }
  }

  private simple(agent: AgentRef, ref: GoalRef, op: 'edit' | 'pause' | 'complete' | 'block', activation: GoalActivation | 'keep', args: Omit<TransitionArgs, 'now'>): GoalState {
    return this.mutate(agent, ref, op, activation, (prev, now) => transition(prev, op, { ...args, now }))!
  }

  private mutate(agentRef: AgentRef, ref: GoalRef | undefined, op: GoalOperation, activation: GoalActivation | 'keep', build: Build): GoalState | undefined {
    const { agent, tracked } = this.track(agentRef)
    if (tracked.appending) {
      // Applying it now would record it before the change being written has told anyone (goal/changed
      // out of record order) and let that change's activation overwrite this one's.
      throw new GoalError('GOAL_BUSY', `Cannot ${op} the goal while another goal change is being recorded (a session/event listener runs inside that append). Make the change from a goal/changed listener, which runs after the record is written.`)
    }
    const prev = tracked.fold.current
    if (op !== 'create') checkRef(prev, ref, op)
    // Clamped to the last recorded time so a clock stepping back cannot make the log unreplayable.
    const now = Math.max(Date.now(), tracked.fold.floor)
    const goal = build(prev, now, tracked)
    const data: GoalChangeData = goal
      ? { op: op as Exclude<GoalOperation, 'clear'>, goal }
      : { op: 'clear', goal: null, cleared: { id: prev!.id, revision: prev!.revision } }
    const previousActivation = tracked.activation
    // Set before the append: a read from a `session/event` listener folds the new record, and must see the
    // activation that goes with it, not the one of the state before.
    if (activation !== 'keep') tracked.activation = activation
    tracked.appending = true
    let record
    try {
      record = agent.session.append(GOAL_CHANGE_RECORD, data)
    } catch (error) {
      tracked.activation = previousActivation
      throw error
    } finally {
      tracked.appending = false
    }
    tracked.fold.catchUp(agent.session.records)
    const folded = tracked.fold.current
    dispatchIsolated(this.ctx, 'goal/changed', agent, { op, seq: record.seq, goal: folded && cloneData(folded), previous: prev && cloneData(prev) })
    if (tracked.activation !== previousActivation) dispatchIsolated(this.ctx, 'goal/activation', agent, tracked.activation)
    return folded && toState(folded, tracked.activation)
  }

  private setActivation(agent: Agent, tracked: Tracked, activation: GoalActivation): void {
    if (tracked.activation === activation) return
    tracked.activation = activation
    // Inside an append the mutation announces the activation it ends with, after its goal/changed.
    if (tracked.appending) return
    dispatchIsolated(this.ctx, 'goal/activation', agent, activation)
  }

  /** For mutations: the agent must be live here. */
  private track(ref: AgentRef): { agent: Agent; tracked: Tracked } {
    const agent = this.live(ref)
    if (!agent) throw new GoalError('GOAL_NO_AGENT', `No agent ${JSON.stringify(ref?.id)} is running in this process; start or resume it first.`)
    return { agent, tracked: this.lookup(agent)! }
  }

  /** For questions: what is known about a live agent's session, caught up; undefined for an agent not live here. */
  private lookup(ref: AgentRef): Tracked | undefined {
    const agent = this.live(ref)
    if (!agent) return undefined
    let tracked = this.tracked.get(agent.id)
    if (!tracked || tracked.session !== agent.session) {
      // A session this process has not followed yet starts disarmed: loading never restores authority.
      tracked = { session: agent.session, fold: new GoalFold(), activation: 'disarmed', appending: false }
      this.tracked.set(agent.id, tracked)
    }
    this.observe(agent.session)
    return tracked
  }

  private live(ref: AgentRef): Agent | undefined {
    return typeof ref?.id === 'string' ? this.agents.get(ref.id) : undefined
  }
}

function checkRef(prev: Goal | undefined, ref: GoalRef | undefined, op: GoalOperation): asserts prev is Goal {
  if (!prev) throw new GoalError('GOAL_NOT_FOUND', `There is no goal to ${op}; create one first.`)
  if (typeof ref !== 'object' || ref === null || ref.id !== prev.id) {
    throw new GoalError('GOAL_NOT_FOUND', `Goal ${JSON.stringify(ref?.id)} is not the current goal; the current goal is ${prev.id} at revision ${prev.revision}. Read the goal again before changing it.`)
  }
  if (ref.revision !== prev.revision) {
    throw new GoalError('GOAL_STALE_REVISION', `Goal ${prev.id} is at revision ${prev.revision}, not ${JSON.stringify(ref.revision)}; it changed since it was read. Read it again and retry with revision ${prev.revision} if the change still makes sense.`)
  }
}

/** A copy for the caller to keep: `get` runs several times a step (the driver, the guards, the meter). */
function toState(goal: Goal, activation: GoalActivation): GoalState {
  return { ...cloneData(goal), activation }
}
