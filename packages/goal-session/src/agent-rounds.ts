import { randomUUID } from 'node:crypto'
import type { Context, Logger } from 'cordis'
import type { Agent, AgentErrorInfo, AgentStatus, CancelReason, PromptDecision, Submission } from '@goalkeeper/agent-loop'
import { isGoalSourced, isRunnable, type GoalActivation, type GoalState } from '@goalkeeper/goal'
import type { TurnOutcome, UserMessage } from '@goalkeeper/session'
import { describeError } from '@goalkeeper/kit'
import type { GoalActions } from './goal-actions.ts'
import { renderGoalRoundPrompt } from './prompt.ts'
import { Round } from './round.ts'
import { DRIVER_BLOCK_CODES, settleRound, type RoundEnd } from './settlement.ts'

/** What the rounds of every agent share: the driver's context, its log, its goal mutations, and whether it unloads. */
export interface RoundsHost {
  readonly ctx: Context
  /** `ctx.goals` and `ctx.sessions`, read once (each read through the context proxy costs). */
  readonly goals: Context['goals']
  readonly sessions: Context['sessions']
  readonly logger: Logger
  readonly actions: GoalActions
  /** The driver is unloading: admission is closed and nothing new is scheduled. */
  readonly closed: boolean
}

/**
 * Where an agent's scheduler is. A pass runs synchronously up to its checkpoint flush, so a round is sent in
 * the same tick as the trigger that made it possible.
 */
type Scheduler =
  | { kind: 'idle' }
  /** A pass is on the stack. */
  | { kind: 'passing' }
  /** A pass is on the stack and a trigger came meanwhile: it looks again before it ends. */
  | { kind: 'passing-again' }
  /** A pass awaits its checkpoint flush and then looks again from the top; `done` settles when it has. */
  | { kind: 'awaiting-checkpoint'; done: Promise<void> }

/**
 * A goal whose reservations keep ending unadmitted (a hook that moves the goal at every admission, a
 * plugin that answers every queued round with input of its own) is stuck, not waiting: stop re-reserving.
 */
const MAX_UNADMITTED = 3

/** Log text for a round that was dropped before the admission fence looked at it again. */
const DROPPED = { stale: 'it went stale', cancelled: 'it was cancelled', rejected: 'it was already refused' } as const

/**
 * The goal rounds of one agent (DESIGN.md section 9), in the order of a round's life: schedule, reserve,
 * fence, veto, turn start, turn end, idle, settle. `RoundDriver` owns the listeners and hands each event to
 * the agent's `AgentRounds`; a listener body that throws is reported through `fail`.
 */
export class AgentRounds {
  /** The one round in flight: reserved, under admission or running, until the driver lets go of it. */
  round?: Round
  private scheduler: Scheduler = { kind: 'idle' }
  /** `goal/changed` events seen, and how many of them the last checkpoint flush covered. */
  private goalChanges = 0
  private checkpointed = 0
  /** Rounds in a row that ended before their turn opened, with no round or human turn in between. */
  private unadmitted = 0
  private settledWaiters: ((goal: GoalState | undefined) => void)[] = []
  /** A condition goal's round is being reviewed (`goal/round-ended`): no round is reserved until it is done. */
  private reviewing?: { done: Promise<void>; controller: AbortController }

  constructor(readonly agent: Agent, private readonly host: RoundsHost) {}

  // --- schedule: triggers and the scheduling pass ------------------------------------------------

  onGoalChanged(): void {
    this.goalChanges++
    this.stopPausedRound()
    this.schedule()
  }

  onActivation(activation: GoalActivation): void {
    if (activation !== 'armed') return
    // Arming is a fresh human decision: whatever went wrong before it is not held against it.
    this.unadmitted = 0
    this.schedule()
  }

  schedule(): void {
    if (this.host.closed) return
    switch (this.scheduler.kind) {
      case 'idle': return this.pass()
      case 'passing': this.scheduler = { kind: 'passing-again' }; return
      // Already marked, or about to look again from the top after its flush.
      case 'passing-again': case 'awaiting-checkpoint': return
    }
  }

  /** Reserves a round if one may run now; a checkpoint owed is flushed first (and the pass goes async there). */
  private pass(): void {
    try {
      do {
        this.scheduler = { kind: 'passing' }
        const goal = this.ready()
        if (goal && this.goalChanges !== this.checkpointed) return this.checkpoint()
        if (goal) this.reserve(goal)
      } while (this.triggeredMeanwhile())
    } catch (error) {
      this.fail('scheduling', error)
    }
    this.scheduler = { kind: 'idle' }
    this.poke()
  }

  /** Read through a method: the compiler would keep the pass's own `passing` narrowed across the triggers it fires. */
  private triggeredMeanwhile(): boolean {
    return this.scheduler.kind === 'passing-again' && !this.host.closed
  }

  /** A goal change since the last checkpoint is made durable before the next reservation. */
  private checkpoint(): void {
    const covers = this.goalChanges
    let flushed: Promise<void>
    try {
      flushed = this.host.sessions.flush(this.agent.session)
    } catch (error) {
      flushed = Promise.reject(error)
    }
    const done = flushed.then(() => {
      this.checkpointed = covers
      // Everything may have changed during the await: look again from the top.
      this.pass()
    }, (error: unknown) => {
      this.host.logger.error('checkpoint flush of session %s failed: %s', this.agent.id, describeError(error, { stack: true }))
      try {
        this.host.actions.disarm(this.agent, 'the checkpoint flush failed')
      } catch (failure) {
        this.fail('scheduling', failure)
      }
      this.scheduler = { kind: 'idle' }
      this.poke()
    })
    this.scheduler = { kind: 'awaiting-checkpoint', done }
  }

  /** The goal, if a round may be reserved now: idle, nothing queued, nothing reserved, active and armed. */
  private ready(): GoalState | undefined {
    const { agent } = this
    if (this.host.closed || agent.disposed || agent.status !== 'idle' || agent.turn !== undefined) return
    if (this.round || this.reviewing || agent.queued.length > 0) return
    const goal = this.goal()
    return isRunnable(goal) ? goal : undefined
  }

  // --- reserve ---------------------------------------------------------------------------------

  private reserve(goal: GoalState): void {
    const { agent } = this
    if (goal.roundsStarted >= goal.maxGoalRounds) {
      this.host.actions.block(agent, { id: goal.id, revision: goal.revision }, {
        code: DRIVER_BLOCK_CODES.roundLimit,
        message: `The goal used all ${goal.maxGoalRounds} rounds without being completed.`,
      })
      return
    }
    const number = goal.roundsStarted + 1
    const round = new Round(randomUUID(), { goalId: goal.id, revision: goal.revision, round: number }, goal.maxGoalRounds, renderGoalRoundPrompt(goal, number), agent.id, this.host.logger)
    this.round = round
    try {
      agent.send(round.message())
    } catch (error) {
      this.letGo(round)
      this.host.logger.error('queueing goal round %d of agent %s failed: %s', number, agent.id, describeError(error, { stack: true }))
      return this.settle(round, { kind: 'send-failed' })
    }
    // A listener of `agent/queued` may have made it stale or cancelled it inside `send`.
    if (round.state.kind === 'sending') round.transition({ kind: 'queued' }, 'reserved and queued')
  }

  // --- fence: only the driver's own round, unaltered and current, gets through ---------------------

  /**
   * The `agent/prompt-submit` fence (DESIGN.md section 9.5), checked before `next()` and again after it,
   * because a later hook may have edited or paused the goal. The goal plugin's listener runs inside it and
   * drops rounds that are not legal. Human messages in the batch are never touched.
   */
  async fence(submission: Submission, next: () => Promise<PromptDecision>): Promise<PromptDecision> {
    let candidate: Round | undefined
    try {
      candidate = this.fenceBefore(submission)
    } catch (error) {
      this.fail('admission', error)
      submission.messages = submission.messages.filter((m) => !isGoalSourced(m))
      candidate = undefined
    }
    let decision: PromptDecision
    try {
      decision = await next()
    } catch (error) {
      if (candidate) this.refuse(candidate, `a later admission hook failed (${describeError(error)})`)
      throw error
    }
    try {
      return this.fenceAfter(candidate, decision)
    } catch (error) {
      this.fail('admission', error)
      return withoutGoalMessages(decision, undefined)
    }
  }

  private fenceBefore(submission: Submission): Round | undefined {
    const { round } = this
    let candidate: Round | undefined
    const kept = submission.messages.filter((message) => {
      if (!isGoalSourced(message)) return true
      if (!round || message.id !== round.id) {
        this.host.logger.warn('dropped goal-sourced message %s of agent %s: it is not the round the driver reserved', message.id, this.agent.id)
        return false
      }
      const why = candidate ? 'the batch holds it twice' : this.whyNotAdmissible(round, message)
      if (why) this.host.logger.info('dropped goal round %d of agent %s before admission: %s', round.number, this.agent.id, why)
      else candidate = round
      return !why
    })
    if (kept.length !== submission.messages.length) submission.messages = kept
    candidate?.transition({ kind: 'deciding' }, 'it passed the fence')
    return candidate
  }

  private whyNotAdmissible(round: Round, message: UserMessage): string | undefined {
    if (!round.isExactly(message)) {
      // The round cannot run as reserved; re-reserving would meet the same tampering, so stop here.
      this.refuse(round, 'its queued message no longer matches the reserved prompt')
      return 'it differs from the reserved prompt'
    }
    return this.dropIfStale(round)
  }

  private fenceAfter(candidate: Round | undefined, decision: PromptDecision): PromptDecision {
    if (!candidate) return withoutGoalMessages(decision, undefined)
    const stale = this.dropIfStale(candidate)
    if (stale) {
      this.host.logger.info('dropped goal round %d of agent %s after admission hooks: %s', candidate.number, this.agent.id, stale)
      return withoutGoalMessages(decision, undefined)
    }
    if (!isSubmit(decision) || !decision.messages.some((m) => m?.id === candidate.id)) {
      const why = decision?.kind === 'reject'
        ? `a later admission hook rejected the batch (${String(decision.reason)})`
        : isSubmit(decision) ? 'a later admission hook dropped it' : 'a later admission hook returned no valid decision'
      this.refuse(candidate, why)
      return isSubmit(decision) ? withoutGoalMessages(decision, undefined) : decision
    }
    candidate.transition({ kind: 'admitted' }, 'it is in the final decision')
    return withoutGoalMessages(decision, candidate.id)
  }

  /** Why the round may no longer run, dropping it (no round used); undefined while it is current. */
  private dropIfStale(round: Round): string | undefined {
    if (round.state.kind === 'dropped') return DROPPED[round.state.why]
    const why = this.host.closed ? 'the round driver is unloading' : round.goalMoved(this.goal())
    if (why) round.transition({ kind: 'dropped', why: 'stale' }, why)
    return why
  }

  // --- veto: the last check, in the tick the turn opens ----------------------------------------

  /**
   * `agent/admit`, in the tick the turn opens (the loop appends the turn's records right after it): a
   * goal-sourced message opens a turn only as the round the fence admitted, still current. This closes the
   * microtasks between the fence and the turn, and holds when a listener outside the fence put a dropped
   * message back into the decision. The reasons are recorded in `input/rejected`.
   */
  veto(message: UserMessage): string | undefined {
    if (!isGoalSourced(message)) return
    try {
      const { round } = this
      if (!round || !round.isExactly(message)) {
        this.host.logger.warn('vetoed goal-sourced message %s of agent %s: it is not the round the driver reserved', message.id, this.agent.id)
        return 'unreserved-goal-round'
      }
      const stale = round.state.kind === 'admitted' ? this.dropIfStale(round) : 'the fence did not admit it'
      if (!stale) return
      this.host.logger.info('vetoed goal round %d of agent %s as its turn opened: %s', round.number, this.agent.id, stale)
      return 'stale-goal-round'
    } catch (error) {
      this.fail('agent/admit', error)
      return 'stale-goal-round'
    }
  }

  // --- other input: it goes first, or the round yields to a person -------------------------------

  onQueued(message: UserMessage): void {
    const { round } = this
    // The id is chosen before `send`, so even the event fired inside it tells the round from a copy.
    if (!round || message.id === round.id) return
    if (['sending', 'queued', 'deciding'].includes(round.state.kind)) {
      // Human precedence: input that arrives while the round waits runs first; the round is reserved again after it.
      return round.transition({ kind: 'dropped', why: 'stale' }, 'other input was queued')
    }
    // A person speaking while the round is admitted or runs goes next: the round yields at its next step boundary.
    if (message.source?.kind === 'human' && round.yieldTo(message.id)) this.preempt(round)
  }

  /** Asks the loop to end a running round's turn at its next step boundary (the cause lands in `turn/end`). */
  private preempt(round: Round): void {
    const { state } = round
    if (state.kind !== 'running' || !state.preemptedBy) return
    const cause = `human message ${state.preemptedBy} arrived during goal round ${round.number}`
    if (this.agent.preempt(state.turn, cause)) this.host.logger.info('goal round %d of agent %s yields: %s', round.number, this.agent.id, cause)
  }

  // --- turn start, and a pause while the turn runs -----------------------------------------------

  onTurnStart(turn: number, messages: UserMessage[]): void {
    const { round } = this
    // A human turn is someone at work, not a stuck driver: the streak starts again after it.
    if (messages.some((m) => m.source?.kind === 'human' || m.id === round?.id)) this.unadmitted = 0
    if (!round || !messages.some((m) => m.id === round.id)) return
    round.transition({ kind: 'running', turn, preemptedBy: round.preemptedBy }, `turn ${turn} opened`)
    this.host.logger.info('goal round %d/%d of agent %s started (turn %d)', round.number, round.max, this.agent.id, turn)
    // A human message queued between admission and this turn: yield before the first model call.
    this.preempt(round)
  }

  /**
   * A pause of the running round's goal is a person's stop (`/goal pause`, `ctx.goals.pause`; the model may
   * pause only in a human turn, never in a round), so the round ends at once, like Ctrl-C. The cancel is
   * scoped to the round's turn: input queued before the pause is kept. A round not open yet is dropped as
   * stale by the fence or the veto.
   */
  private stopPausedRound(): void {
    const { round } = this
    if (round?.state.kind !== 'running') return
    const goal = this.goal()
    if (goal?.id !== round.identity.goalId || goal.phase !== 'paused') return
    this.host.logger.info('goal round %d of agent %s: the goal was paused, the round is cancelled', round.number, this.agent.id)
    this.agent.cancel('user', { turn: round.state.turn })
  }

  // --- turn end --------------------------------------------------------------------------------

  onTurnEnd(turn: number, outcome: TurnOutcome): void {
    const { round } = this
    if (!round || round.turn !== turn) return
    if (round.state.kind === 'running') round.transition({ kind: 'ended', turn, outcome }, `turn ${turn} ended ${outcome?.kind}`)
    if (round.state.kind === 'ended' && outcome?.kind === 'preempted') {
      // Settled now: the human turn it yielded to runs before the agent is idle again.
      this.letGo(round)
      return this.settle(round, { kind: 'turn', outcome })
    }
    round.leave()
  }

  // --- idle: the round's turn is over, or its message never opened one ----------------------------

  onStatus(status: AgentStatus): void {
    if (status !== 'idle') return
    const { round } = this
    if (round?.turn !== undefined) {
      // The outcome, the post-turn flush and any cancel are all known now.
      this.letGo(round)
      // A cancelled round was settled when the cancel came.
      if (round.state.kind !== 'dropped') this.settle(round, { kind: 'turn', outcome: round.state.kind === 'ended' ? round.state.outcome : undefined })
    } else if (round && round.state.kind !== 'sending' && !this.agent.queued.some((m) => m.id === round.id)) {
      this.endUnadmitted(round)
    }
    this.schedule()
  }

  /** Whether `messageId` is the round's message and no turn of it opened (its `input/rejected` or `input/cancelled` ends it). */
  waitsFor(messageId: string): boolean {
    return this.round !== undefined && this.round.turn === undefined && this.round.id === messageId
  }

  /** The round's message left the inbox without opening a turn. */
  onMessageGone(messageId: string): void {
    if (this.round && this.waitsFor(messageId)) this.endUnadmitted(this.round)
  }

  /** Its message left the inbox without opening a turn: rejected, cancelled, or gone by idle. */
  private endUnadmitted(round: Round): void {
    if (this.round !== round) return
    this.letGo(round)
    if (round.state.kind === 'admitted') this.refuse(round, 'its turn never opened')
    if (++this.unadmitted >= MAX_UNADMITTED && isRunnable(this.goal())) {
      this.host.logger.error('goal rounds of agent %s were dropped %d times in a row before their turn opened; automatic rounds stop until a resume', this.agent.id, MAX_UNADMITTED)
      this.host.actions.disarm(this.agent, 'its rounds never got admitted')
      return
    }
    this.schedule()
  }

  /** The driver lets go of the round: it ran its turn, or its message is gone. */
  private letGo(round: Round): void {
    if (this.round === round) this.round = undefined
    round.leave()
  }

  // --- settle: every way a round ends goes through `settle` --------------------------------------

  onCancel(reason: CancelReason): void {
    if (this.host.closed) return
    const { round } = this
    if (!round?.can('cancelled')) return this.host.actions.disarm(this.agent, `other work was cancelled (${reason})`)
    // Settled now, before the loop clears the inbox; the turn's `aborted` outcome is then not a second verdict.
    round.transition({ kind: 'dropped', why: 'cancelled', turn: round.turn }, `cancel (${reason})`)
    this.settle(round, { kind: 'cancelled', reason })
  }

  onError(turn: number | undefined, error: AgentErrorInfo): void {
    if (error?.code !== 'FLUSH_FAILED') return
    // Whatever turn it belongs to: the log may not hold what the goal state says, so stop. A round's
    // settlement at idle then finds the goal disarmed and leaves it so.
    this.host.actions.disarm(this.agent, `the session flush after turn ${turn} failed`)
  }

  /** A round the driver held current did not get in: block, never retry. */
  private refuse(round: Round, why: string): void {
    if (!round.can('rejected')) return
    round.transition({ kind: 'dropped', why: 'rejected' }, why)
    this.settle(round, { kind: 'refused', why })
  }

  private settle(round: Round, end: RoundEnd): void {
    const { agent, host } = this
    const action = settleRound(end, { round: round.number, moved: round.goalMoved(this.goal()) })
    switch (action.kind) {
      case 'continue':
        if (action.note) host.logger.info('goal round of agent %s: %s', agent.id, action.note)
        return this.review(round)
      case 'stand': return void host.logger.info('goal round of agent %s: %s', agent.id, action.why)
      case 'preempted': return void host.logger.info('goal round of agent %s: %s', agent.id, action.why)
      case 'pause': return host.actions.pause(agent, round.ref, action.why)
      case 'block': return host.actions.block(agent, round.ref, action.reason)
      case 'disarm': return host.actions.disarm(agent, action.why)
    }
  }

  /**
   * A round of a condition goal went on: before the next one is reserved, `goal/round-ended` listeners (the
   * goal tools: checks, then the judge) decide whether the condition is met. The driver knows no judge; it
   * only waits, so a review that completes or blocks the goal is seen by the next scheduling pass.
   */
  private review(round: Round): void {
    // Read without throwing: a round also settles as its agent goes away, and that must stay a quiet no-op.
    if (this.host.closed || this.agent.disposed) return
    const goal = this.liveGoal()
    const turn = round.turn
    if (!goal?.until || turn === undefined || round.goalMoved(goal)) return
    const controller = new AbortController()
    const { agent, host } = this
    const ended = { goalId: goal.id, revision: goal.revision, round: round.number, turn, signal: controller.signal }
    const done = (async () => {
      try {
        await host.ctx.parallel('goal/round-ended', agent, ended)
      } catch (error) {
        // A failed review has not found the condition met: the goal goes on, and the next round may end it.
        host.logger.error('the review of goal round %d of agent %s failed: %s', round.number, agent.id, describeError(error, { stack: true }))
      }
    })()
    const reviewing = { done, controller }
    this.reviewing = reviewing
    void done.then(() => {
      if (this.reviewing === reviewing) this.reviewing = undefined
      this.schedule()
      this.poke()
    })
  }

  // --- at rest, unload, gone ---------------------------------------------------------------------

  /** Resolves with the goal once no round is held or being scheduled, the agent is idle with nothing queued, and its goal will not run. */
  whenSettled(): Promise<GoalState | undefined> {
    return new Promise((resolve) => {
      this.settledWaiters.push(resolve)
      this.poke()
    })
  }

  /** Called wherever this agent may have come to rest; releases the `whenSettled` waiters if it has. */
  poke(): void {
    if (this.settledWaiters.length && this.atRest()) this.release()
  }

  /** Releases every `whenSettled` waiter with the goal as it is now. */
  release(): void {
    const goal = this.liveGoal()
    for (const resolve of this.settledWaiters.splice(0)) resolve(goal)
  }

  private atRest(): boolean {
    const { agent } = this
    if (agent.disposed) return true
    if (this.round || this.reviewing || this.scheduler.kind !== 'idle') return false
    if (agent.status !== 'idle' || agent.queued.length > 0) return false
    return this.host.closed || !isRunnable(this.liveGoal())
  }

  /**
   * The driver unloads (admission is already closed): a running round is cancelled with `parent`, scoped to
   * its turn so queued human input survives; a round whose turn has not opened yet is vetoed as it opens, and
   * one still waiting is dropped by the closed fence. Resolves once the pass and the round are over.
   */
  async unload(): Promise<void> {
    const waits: Promise<unknown>[] = []
    if (this.scheduler.kind === 'awaiting-checkpoint') waits.push(this.scheduler.done)
    if (this.reviewing) {
      this.reviewing.controller.abort()
      waits.push(this.reviewing.done)
    }
    const { round, agent } = this
    const holds = round !== undefined && !agent.disposed
    if (holds && round.state.kind === 'running') {
      try {
        agent.cancel('parent', { turn: round.state.turn })
      } catch (error) {
        this.host.logger.error('cancelling goal round %d of agent %s failed: %s', round.number, agent.id, describeError(error, { stack: true }))
      }
    }
    if (holds) waits.push(round.left)
    await Promise.allSettled(waits)
    // The round is over; wait for its post-turn flush unless human work is already queued behind it.
    if (holds && !agent.disposed && agent.queued.length === 0) await agent.whenIdle()
  }

  /** The agent is gone: activation is process-local and goes with it (the goal package forgets it too). */
  forget(): void {
    if (this.round) this.letGo(this.round)
    this.release()
  }

  /** A listener body failed: logged, and automatic work stops for this agent. */
  fail(where: string, error: unknown): void {
    this.host.logger.error('%s failed for agent %s: %s', where, this.agent.id, describeError(error, { stack: true }))
    this.host.actions.disarm(this.agent, `${where} failed`)
  }

  /** The live goal. A corrupt goal log is not "no goal": it throws, so the listener that asked fails loudly. */
  private goal(): GoalState | undefined {
    const health = this.host.goals.health(this.agent)
    if (!health.ok) throw health.error
    return this.host.goals.get(this.agent)
  }

  /** The goal as a waiter sees it: a corrupt log or a goal service already gone reads as none. */
  private liveGoal(): GoalState | undefined {
    try {
      return this.host.goals.get(this.agent)
    } catch {
      return undefined
    }
  }
}

function isSubmit(decision: unknown): decision is Extract<PromptDecision, { kind: 'submit' }> {
  return typeof decision === 'object' && decision !== null
    && (decision as PromptDecision).kind === 'submit' && Array.isArray((decision as { messages?: unknown }).messages)
}

/** Goal-sourced messages other than the admitted round never leave the fence, whoever added them. */
function withoutGoalMessages(decision: PromptDecision, keepId: string | undefined): PromptDecision {
  if (!isSubmit(decision)) return decision
  const messages = decision.messages.filter((m) => !isGoalSourced(m) || m.id === keepId)
  return messages.length === decision.messages.length ? decision : { ...decision, messages }
}
