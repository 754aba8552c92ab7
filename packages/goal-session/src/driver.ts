import { randomUUID } from 'node:crypto'
import type { Context, Logger } from 'cordis'
import type { Agent, AgentErrorInfo, AgentStatus, CancelReason, PromptDecision, Submission } from '@goalkeeper/agent-loop'
import { isGoalSourced, isRunnable, type GoalActivation, type GoalState } from '@goalkeeper/goal'
import { isRecordOf, type Session, type SessionRecord, type TurnOutcome, type UserMessage } from '@goalkeeper/session'
import { describeError } from '@goalkeeper/kit'
import { GoalActions } from './goal-actions.ts'
import { renderGoalRoundPrompt } from './prompt.ts'
import { Round } from './round.ts'
import { DRIVER_BLOCK_CODES, settleRound, type RoundEnd } from './settlement.ts'
import { SettledWaits } from './settled.ts'
import type { DriverRound, GoalDriver } from './types.ts'

interface AgentState {
  agent: Agent
  round?: Round
  /** A `goal/changed` since the last checkpoint: flush before the next reservation. */
  checkpointOwed: boolean
  /** A scheduling pass is on the stack or awaiting its checkpoint. */
  scheduling: boolean
  /** Something changed while the pass ran: run it again. */
  again: boolean
  pass?: Promise<void>
  /** Rounds in a row that ended before their turn opened, with no round or human turn in between. */
  unadmitted: number
}

/**
 * A goal whose reservations keep ending unadmitted (a hook that moves the goal at every admission, a
 * plugin that answers every queued round with input of its own) is stuck, not waiting: stop re-reserving.
 */
const MAX_UNADMITTED = 3

/** Log text for a round that was dropped before the admission fence looked at it again. */
const DROPPED = { stale: 'it went stale', cancelled: 'it was cancelled', rejected: 'it was already refused' } as const

/**
 * Turns an active, armed goal into sequential rounds in the same session (DESIGN.md section 9). Whether a
 * round is legal is the goal plugin's question; the driver asks only whether a goal-sourced message is its
 * own round, unaltered and still current. One instance per loaded plugin; `install` sets up everything in one effect.
 */
export class RoundDriver implements GoalDriver {
  readonly logger: Logger
  readonly actions: GoalActions
  closed = false
  private states = new Map<string, AgentState>()
  private readonly settledWaits: SettledWaits

  constructor(readonly ctx: Context) {
    this.logger = ctx.logger('goal-session')
    this.actions = new GoalActions(ctx, this.logger)
    this.settledWaits = new SettledWaits(ctx)
  }

  install(): void {
    const driver = this
    const ctx = this.ctx
    ctx.effect(function* () {
      // Prepended after the goal plugin's listener, so the fence is the outermost one and sees the final decision.
      yield ctx.on('agent/prompt-submit', (agent: Agent, submission: Submission, next: () => Promise<PromptDecision>) => driver.admit(agent, submission, next), { prepend: true })
      yield ctx.on('agent/admit', (agent: Agent, message: UserMessage) => driver.vetoOnAdmit(agent, message))
      yield ctx.on('agent/queued', (agent: Agent, message: UserMessage) => driver.guarded(agent, 'agent/queued', (st) => driver.onQueued(st, message)))
      yield ctx.on('agent/turn-start', (agent: Agent, turn: number, messages: UserMessage[]) => driver.guarded(agent, 'agent/turn-start', (st) => driver.onTurnStart(st, turn, messages)))
      yield ctx.on('agent/turn-end', (agent: Agent, turn: number, outcome: TurnOutcome) => driver.guarded(agent, 'agent/turn-end', (st) => driver.onTurnEnd(st, turn, outcome)))
      yield ctx.on('agent/cancel-requested', (agent: Agent, reason: CancelReason) => driver.guarded(agent, 'agent/cancel-requested', (st) => driver.onCancel(st, reason)))
      yield ctx.on('session/event', (session: Session, record: SessionRecord) => driver.onSessionEvent(session, record))
      yield ctx.on('agent/error', (agent: Agent, turn: number | undefined, error: AgentErrorInfo) => driver.guarded(agent, 'agent/error', (st) => driver.onError(st, turn, error)))
      yield ctx.on('agent/status', (agent: Agent, status: AgentStatus) => driver.guarded(agent, 'agent/status', (st) => driver.onStatus(st, status)))
      yield ctx.on('goal/changed', (agent: Agent) => driver.guarded(agent, 'goal/changed', (st) => driver.onGoalChanged(st)))
      yield ctx.on('goal/activation', (agent: Agent, activation: GoalActivation) => driver.guarded(agent, 'goal/activation', (st) => driver.onActivation(st, activation)))
      yield ctx.on('agent/disposed', (agent: Agent) => driver.onDisposed(agent))
      yield ctx.provide('goalDriver', { current: (agent: { id: string }) => driver.current(agent), whenSettled: (agent: { id: string }) => driver.whenSettled(agent) } satisfies GoalDriver)
      // Runs first on unload, while every listener above is still installed.
      yield () => driver.shutdown()
    }, 'goal-session')
    this.settledWaits.install()
    this.disarmLoaded()
  }

  current(agent: { id: string }): DriverRound | undefined {
    const round = this.states.get(agent?.id)?.round
    return round && { ...round.identity, state: round.state.kind }
  }

  whenSettled(agent: { id: string }): Promise<GoalState | undefined> {
    return this.settledWaits.wait(agent)
  }

  // --- state ---------------------------------------------------------------------------------

  /** The live agent behind an event argument (goal events may carry a tool's view of it). */
  private resolve(agentLike: { id: string }): Agent | undefined {
    let agent = this.states.get(agentLike.id)?.agent
    if (!agent || agent.disposed) {
      try {
        agent = this.ctx.agents.get(agentLike.id)
      } catch {
        agent = undefined
      }
    }
    if (!agent && isAgent(agentLike)) agent = agentLike
    return agent && !agent.disposed ? agent : undefined
  }

  private state(agent: Agent): AgentState {
    let st = this.states.get(agent.id)
    if (!st || st.agent !== agent) {
      st = { agent, checkpointOwed: false, scheduling: false, again: false, unadmitted: 0 }
      this.states.set(agent.id, st)
    }
    return st
  }

  /** The live goal. A corrupt goal log is not "no goal": it throws, so the listener that asked fails loudly. */
  private goalOf(agent: Agent): GoalState | undefined {
    const health = this.ctx.goals.health(agent)
    if (!health.ok) throw health.error
    return this.ctx.goals.get(agent)
  }

  /** Runs a listener body; a failure is logged and stops automatic work for that agent. */
  private guarded(agentLike: { id: string }, where: string, body: (st: AgentState) => void): void {
    const agent = this.resolve(agentLike)
    if (!agent) return
    try {
      body(this.state(agent))
    } catch (error) {
      this.fail(agent, where, error)
    }
  }

  private fail(agent: { id: string }, where: string, error: unknown): void {
    this.logger.error('%s failed for agent %s: %s', where, agent.id, describeError(error, { stack: true }))
    this.actions.disarm(agent, `${where} failed`)
  }

  /** The driver lets go of the round: it ran its turn, or its message is gone. */
  private finish(st: AgentState, round: Round): void {
    if (st.round === round) st.round = undefined
    round.leave()
  }

  // --- admission: only the driver's own round, unaltered and current, gets through ---------------

  /**
   * The `agent/prompt-submit` fence (DESIGN.md section 9.5), checked before `next()` and again after it,
   * because a later hook may have edited or paused the goal. The goal plugin's listener runs inside it and
   * drops rounds that are not legal. Human messages in the batch are never touched.
   */
  private async admit(agent: Agent, submission: Submission, next: () => Promise<PromptDecision>): Promise<PromptDecision> {
    const st = this.states.get(agent.id)
    let candidate: Round | undefined
    try {
      candidate = this.admitBefore(st, agent, submission)
    } catch (error) {
      this.fail(agent, 'admission', error)
      submission.messages = submission.messages.filter((m) => !isGoalSourced(m))
      candidate = undefined
    }
    let decision: PromptDecision
    try {
      decision = await next()
    } catch (error) {
      if (candidate) this.refuse(st!, candidate, `a later admission hook failed (${describeError(error)})`)
      throw error
    }
    try {
      return this.admitAfter(st, agent, candidate, decision)
    } catch (error) {
      this.fail(agent, 'admission', error)
      return withoutGoalMessages(decision, undefined)
    }
  }

  private admitBefore(st: AgentState | undefined, agent: Agent, submission: Submission): Round | undefined {
    const round = st?.round
    let candidate: Round | undefined
    const kept = submission.messages.filter((message) => {
      if (!isGoalSourced(message)) return true
      if (!round || message.id !== round.id) {
        this.logger.warn('dropped goal-sourced message %s of agent %s: it is not the round the driver reserved', message.id, agent.id)
        return false
      }
      const why = candidate ? 'the batch holds it twice' : this.whyNotAdmissible(st!, round, message)
      if (why) this.logger.info('dropped goal round %d of agent %s before admission: %s', round.number, agent.id, why)
      else candidate = round
      return !why
    })
    if (kept.length !== submission.messages.length) submission.messages = kept
    candidate?.transition({ kind: 'deciding' }, 'it passed the fence')
    return candidate
  }

  private whyNotAdmissible(st: AgentState, round: Round, message: UserMessage): string | undefined {
    if (!round.isExactly(message)) {
      // The round cannot run as reserved; re-reserving would meet the same tampering, so stop here.
      this.refuse(st, round, 'its queued message no longer matches the reserved prompt')
      return 'it differs from the reserved prompt'
    }
    return this.dropIfStale(st, round)
  }

  private admitAfter(st: AgentState | undefined, agent: Agent, candidate: Round | undefined, decision: PromptDecision): PromptDecision {
    if (!candidate) return withoutGoalMessages(decision, undefined)
    const stale = this.dropIfStale(st!, candidate)
    if (stale) {
      this.logger.info('dropped goal round %d of agent %s after admission hooks: %s', candidate.number, agent.id, stale)
      return withoutGoalMessages(decision, undefined)
    }
    if (!isSubmit(decision) || !decision.messages.some((m) => m?.id === candidate.id)) {
      const why = decision?.kind === 'reject'
        ? `a later admission hook rejected the batch (${String(decision.reason)})`
        : isSubmit(decision) ? 'a later admission hook dropped it' : 'a later admission hook returned no valid decision'
      this.refuse(st!, candidate, why)
      return isSubmit(decision) ? withoutGoalMessages(decision, undefined) : decision
    }
    candidate.transition({ kind: 'admitted' }, 'it is in the final decision')
    return withoutGoalMessages(decision, candidate.id)
  }

  /**
   * `agent/admit`, in the tick the turn opens (the loop appends the turn's records right after it): a
   * goal-sourced message opens a turn only as the round the fence admitted, still current. This closes the
   * microtasks between the fence and the turn, and holds when a listener outside the fence put a dropped
   * message back into the decision. The reasons are recorded in `input/rejected`.
   */
  private vetoOnAdmit(agent: Agent, message: UserMessage): string | undefined {
    if (!isGoalSourced(message)) return
    try {
      const st = this.states.get(agent.id)
      const round = st?.round
      if (!round || !round.isExactly(message)) {
        this.logger.warn('vetoed goal-sourced message %s of agent %s: it is not the round the driver reserved', message.id, agent.id)
        return 'unreserved-goal-round'
      }
      const stale = round.state.kind === 'admitted' ? this.dropIfStale(st!, round) : 'the fence did not admit it'
      if (!stale) return
      this.logger.info('vetoed goal round %d of agent %s as its turn opened: %s', round.number, agent.id, stale)
      return 'stale-goal-round'
    } catch (error) {
      this.fail(agent, 'agent/admit', error)
      return 'stale-goal-round'
    }
  }

  /** Why the round may no longer run, dropping it (no round used); undefined while it is current. */
  private dropIfStale(st: AgentState, round: Round): string | undefined {
    if (round.state.kind === 'dropped') return DROPPED[round.state.why]
    const why = this.closed ? 'the round driver is unloading' : round.goalMoved(this.goalOf(st.agent))
    if (why) round.transition({ kind: 'dropped', why: 'stale' }, why)
    return why
  }

  // --- the round's messages and turn -----------------------------------------------------------

  private onQueued(st: AgentState, message: UserMessage): void {
    const round = st.round
    // The id is chosen before `send`, so even the event fired inside it tells the round from a copy.
    if (!round || message.id === round.id) return
    if (['sending', 'queued', 'deciding'].includes(round.state.kind)) {
      // Human precedence: input that arrives while the round waits runs first; the round is reserved again after it.
      return round.transition({ kind: 'dropped', why: 'stale' }, 'other input was queued')
    }
    // A person speaking while the round runs goes next: the round yields at its next step boundary.
    if (message.source?.kind !== 'human' || round.preemptedBy) return
    if (round.state.kind !== 'admitted' && round.state.kind !== 'running') return
    round.preemptedBy = message.id
    if (round.state.kind === 'running') this.preempt(st, round)
  }

  /** Asks the loop to end the round's turn at its next step boundary (the cause lands in `turn/end`). */
  private preempt(st: AgentState, round: Round): void {
    const cause = `human message ${round.preemptedBy} arrived during goal round ${round.number}`
    if (st.agent.preempt(round.turn!, cause)) this.logger.info('goal round %d of agent %s yields: %s', round.number, st.agent.id, cause)
  }

  private onSessionEvent(session: Session, record: SessionRecord): void {
    if (!isRecordOf(record, 'input/rejected', 'input/cancelled')) return
    const round = this.states.get(session.id)?.round
    if (!round || round.turn !== undefined || record.data.messageId !== round.id) return
    this.guarded(session, 'session/event', (st) => this.endUnadmitted(st, round))
  }

  private onTurnStart(st: AgentState, turn: number, messages: UserMessage[]): void {
    const round = st.round
    // A human turn is someone at work, not a stuck driver: the streak starts again after it.
    if (messages.some((m) => m.source?.kind === 'human' || m.id === round?.id)) st.unadmitted = 0
    if (!round || !messages.some((m) => m.id === round.id)) return
    round.transition({ kind: 'running', turn }, `turn ${turn} opened`)
    this.logger.info('goal round %d/%d of agent %s started (turn %d)', round.number, round.max, st.agent.id, turn)
    // A human message queued between admission and this turn: yield before the first model call.
    if (round.preemptedBy) this.preempt(st, round)
  }

  private onTurnEnd(st: AgentState, turn: number, outcome: TurnOutcome): void {
    const round = st.round
    if (!round || round.turn !== turn) return
    if (round.state.kind === 'running') round.transition({ kind: 'ended', turn, outcome }, `turn ${turn} ended ${outcome?.kind}`)
    if (round.state.kind === 'ended' && outcome?.kind === 'preempted') {
      // Settled now: the human turn it yielded to runs before the agent is idle again.
      this.finish(st, round)
      return this.settle(st, round, { kind: 'turn', outcome })
    }
    round.leave()
  }

  /** Its message left the inbox without opening a turn: rejected, cancelled, or gone by idle. */
  private endUnadmitted(st: AgentState, round: Round): void {
    if (st.round !== round) return
    this.finish(st, round)
    if (round.state.kind === 'admitted') this.refuse(st, round, 'its turn never opened')
    if (++st.unadmitted >= MAX_UNADMITTED && isRunnable(this.goalOf(st.agent))) {
      this.logger.error('goal rounds of agent %s were dropped %d times in a row before their turn opened; automatic rounds stop until a resume', st.agent.id, MAX_UNADMITTED)
      this.actions.disarm(st.agent, 'its rounds never got admitted')
      return
    }
    this.schedule(st)
  }

  // --- settlement: every way a round ends goes through `settle` ---------------------------------

  private onCancel(st: AgentState, reason: CancelReason): void {
    if (this.closed) return
    const round = st.round
    if (!round?.can('cancelled')) return this.actions.disarm(st.agent, `other work was cancelled (${reason})`)
    // Settled now, before the loop clears the inbox; the turn's `aborted` outcome is then not a second verdict.
    round.transition({ kind: 'dropped', why: 'cancelled', turn: round.turn }, `cancel (${reason})`)
    this.settle(st, round, { kind: 'cancelled', reason })
  }

  /** A round the driver held current did not get in: block, never retry. */
  private refuse(st: AgentState, round: Round, why: string): void {
    if (!round.can('rejected')) return
    round.transition({ kind: 'dropped', why: 'rejected' }, why)
    this.settle(st, round, { kind: 'refused', why })
  }

  private onError(st: AgentState, turn: number | undefined, error: AgentErrorInfo): void {
    if (error?.code !== 'FLUSH_FAILED') return
    // Whatever turn it belongs to: the log may not hold what the goal state says, so stop. A round's
    // settlement at idle then finds the goal disarmed and leaves it so.
    this.actions.disarm(st.agent, `the session flush after turn ${turn} failed`)
  }

  private onStatus(st: AgentState, status: AgentStatus): void {
    if (status !== 'idle') return
    const round = st.round
    if (round?.turn !== undefined) {
      // The outcome, the post-turn flush and any cancel are all known now.
      this.finish(st, round)
      // A cancelled round was settled when the cancel came.
      if (round.state.kind !== 'dropped') this.settle(st, round, { kind: 'turn', outcome: round.state.kind === 'ended' ? round.state.outcome : undefined })
    } else if (round && round.state.kind !== 'sending' && !st.agent.queued.some((m) => m.id === round.id)) {
      this.endUnadmitted(st, round)
    }
    this.schedule(st)
  }

  private settle(st: AgentState, round: Round, end: RoundEnd): void {
    const agent = st.agent
    const action = settleRound(end, { round: round.number, moved: round.goalMoved(this.goalOf(agent)) })
    switch (action.kind) {
      case 'continue': return void (action.note && this.logger.info('goal round of agent %s: %s', agent.id, action.note))
      case 'stand': return void this.logger.info('goal round of agent %s: %s', agent.id, action.why)
      case 'preempted': return void this.logger.info('goal round of agent %s: %s', agent.id, action.why)
      case 'pause': return this.actions.pause(agent, round.ref, action.why)
      case 'block': return this.actions.block(agent, round.ref, action.reason)
      case 'disarm': return this.actions.disarm(agent, action.why)
    }
  }

  // --- triggers and scheduling -------------------------------------------------------------------

  private onGoalChanged(st: AgentState): void {
    st.checkpointOwed = true
    this.stopPausedRound(st)
    this.schedule(st)
  }

  /**
   * A pause of the running round's goal is a person's stop (`/goal pause`, `ctx.goals.pause`; the model may
   * pause only in a human turn, never in a round), so the round ends at once, like Ctrl-C. The cancel is
   * scoped to the round's turn: input queued before the pause is kept. A round not open yet is dropped as
   * stale by the fence or the veto.
   */
  private stopPausedRound(st: AgentState): void {
    const round = st.round
    if (round?.state.kind !== 'running') return
    const goal = this.goalOf(st.agent)
    if (goal?.id !== round.identity.goalId || goal.phase !== 'paused') return
    this.logger.info('goal round %d of agent %s: the goal was paused, the round is cancelled', round.number, st.agent.id)
    st.agent.cancel('user', { turn: round.state.turn })
  }

  private onActivation(st: AgentState, activation: GoalActivation): void {
    if (activation !== 'armed') return
    // Arming is a fresh human decision: whatever went wrong before it is not held against it.
    st.unadmitted = 0
    this.schedule(st)
  }

  private schedule(st: AgentState): void {
    if (this.closed) return
    if (st.scheduling) {
      st.again = true
      return
    }
    st.scheduling = true
    st.pass = this.runPass(st)
  }

  /** Synchronous up to its checkpoint await, so a round is sent in the same tick as the trigger. */
  private async runPass(st: AgentState): Promise<void> {
    try {
      do {
        st.again = false
        const goal = this.ready(st)
        if (!goal) continue
        if (st.checkpointOwed) {
          st.checkpointOwed = false
          try {
            await this.ctx.sessions.flush(st.agent.session)
          } catch (error) {
            st.checkpointOwed = true
            this.logger.error('checkpoint flush of session %s failed: %s', st.agent.id, describeError(error, { stack: true }))
            this.actions.disarm(st.agent, 'the checkpoint flush failed')
            return
          }
          // Everything may have changed during the await: re-check from the top.
          st.again = true
          continue
        }
        this.startRound(st, goal)
      } while (st.again && !this.closed)
    } catch (error) {
      this.fail(st.agent, 'scheduling', error)
    } finally {
      st.scheduling = false
    }
  }

  /** The goal, if a round may be reserved now: idle, nothing queued, nothing reserved, active and armed. */
  private ready(st: AgentState): GoalState | undefined {
    const agent = st.agent
    if (this.closed || agent.disposed || agent.status !== 'idle' || agent.turn !== undefined) return
    if (st.round || agent.queued.length > 0) return
    const goal = this.goalOf(agent)
    return isRunnable(goal) ? goal : undefined
  }

  private startRound(st: AgentState, goal: GoalState): void {
    const agent = st.agent
    if (goal.roundsStarted >= goal.maxGoalRounds) {
      this.actions.block(agent, { id: goal.id, revision: goal.revision }, {
        code: DRIVER_BLOCK_CODES.roundLimit,
        message: `The goal used all ${goal.maxGoalRounds} rounds without being completed.`,
      })
      return
    }
    const number = goal.roundsStarted + 1
    const round = new Round(randomUUID(), { goalId: goal.id, revision: goal.revision, round: number }, goal.maxGoalRounds, renderGoalRoundPrompt(goal, number), agent.id, this.logger)
    st.round = round
    try {
      agent.send(round.message())
    } catch (error) {
      this.finish(st, round)
      this.logger.error('queueing goal round %d of agent %s failed: %s', number, agent.id, describeError(error, { stack: true }))
      return this.settle(st, round, { kind: 'send-failed' })
    }
    // A listener of `agent/queued` may have made it stale or cancelled it inside `send`.
    if (round.state.kind === 'sending') round.transition({ kind: 'queued' }, 'reserved and queued')
  }

  // --- lifecycle ------------------------------------------------------------------------------

  private onDisposed(agentLike: { id: string }): void {
    const st = this.states.get(agentLike.id)
    if (!st) return
    this.states.delete(agentLike.id)
    // Activation is process-local and goes with the agent; the goal package forgets it too.
    if (st.round) this.finish(st, st.round)
  }

  /** A goal that was armed before the driver existed never runs without a fresh human resume. */
  private disarmLoaded(): void {
    let agents: Agent[] = []
    try {
      agents = this.ctx.agents.list()
    } catch (error) {
      this.logger.error('listing agents at load failed: %s', describeError(error, { stack: true }))
    }
    for (const agent of agents) this.actions.disarm(agent, 'the round driver was loaded')
  }

  /** Close admission, disarm, cancel a running round, wait for quiescence; listeners go after this. */
  private async shutdown(): Promise<void> {
    this.closed = true
    const states = [...this.states.values()]
    let agents: Agent[] = states.map((st) => st.agent)
    try {
      agents = [...new Set([...agents, ...this.ctx.agents.list()])]
    } catch {
      // the agents service may already be gone in a whole-tree shutdown
    }
    for (const agent of agents) if (!agent.disposed) this.actions.disarm(agent, 'the round driver is unloading')
    const waits: Promise<unknown>[] = []
    const settleAgents: Agent[] = []
    for (const st of states) {
      if (st.pass) waits.push(st.pass)
      const round = st.round
      if (!round || st.agent.disposed) continue
      // Scoped to the round's turn so queued human input survives; a round whose turn has not opened
      // yet is vetoed as it opens, and one still waiting is dropped by the closed fence.
      if (round.state.kind === 'running') {
        try {
          st.agent.cancel('parent', { turn: round.state.turn })
        } catch (error) {
          this.logger.error('cancelling goal round %d of agent %s failed: %s', round.number, st.agent.id, describeError(error, { stack: true }))
        }
      }
      waits.push(round.left)
      settleAgents.push(st.agent)
    }
    await Promise.allSettled(waits)
    // The round is over; wait for its post-turn flush unless human work is already queued behind it.
    await Promise.allSettled(settleAgents.filter((a) => !a.disposed && a.queued.length === 0).map((a) => a.whenIdle()))
    this.states.clear()
  }
}

function isAgent(value: { id: string }): value is Agent {
  return typeof (value as Agent).send === 'function' && typeof (value as Agent).whenIdle === 'function'
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
