import { randomUUID } from 'node:crypto'
import type { Context, Logger } from 'cordis'
import type { Agent, AgentErrorInfo, AgentStatus, CancelReason, PromptDecision, Submission } from '@goalkeeper/agent-loop'
import type { GoalActivation, GoalState } from '@goalkeeper/goal'
import type { Session, SessionRecord, TurnOutcome, UserMessage } from '@goalkeeper/session'
import { admitBatch, lastWord, type AdmissionHost } from './admission.ts'
import { describeError } from './errors.ts'
import { GoalActions } from './goal-actions.ts'
import { renderGoalRoundPrompt } from './prompt.ts'
import { goalMoved, newReservation, type GoalRoundSource, type Reservation } from './reservation.ts'
import { DRIVER_BLOCK_CODES, settleRound } from './settlement.ts'

interface AgentState {
  agent: Agent
  reservation?: Reservation
  /** A `goal/changed` since the last checkpoint: flush before the next reservation. */
  checkpointOwed: boolean
  /** A scheduling pass is on the stack or awaiting its checkpoint. */
  scheduling: boolean
  /** Something changed while the pass ran: run it again. */
  again: boolean
  pass?: Promise<void>
  /** Reservations in a row that ended before their turn opened, with no round or human turn in between. */
  unadmitted: number
}

/**
 * A goal whose reservations keep ending unadmitted (a hook that moves the goal at every admission, a
 * plugin that answers every queued round with input of its own) is stuck, not waiting: stop re-reserving.
 */
const MAX_UNADMITTED = 3

/**
 * Turns an active, armed goal into sequential rounds in the same session (DESIGN.md section 9).
 * One instance per loaded plugin; every listener it owns is installed by `install` in one effect.
 */
export class RoundDriver implements AdmissionHost {
  readonly logger: Logger
  readonly actions: GoalActions
  closed = false
  private states = new Map<string, AgentState>()

  constructor(readonly ctx: Context) {
    this.logger = ctx.logger('goal-session')
    this.actions = new GoalActions(ctx, this.logger)
  }

  install(): void {
    const driver = this
    const ctx = this.ctx
    ctx.effect(function* () {
      // Prepended so the fence is the outermost admission listener and sees the final decision.
      yield ctx.on('agent/prompt-submit', (agent: Agent, submission: Submission, next: () => Promise<PromptDecision>) => admitBatch(driver, agent, submission, next), { prepend: true })
      yield ctx.on('agent/admit', (agent: Agent, message: UserMessage) => lastWord(driver, agent, message))
      yield ctx.on('agent/queued', (agent: Agent, message: UserMessage) => driver.guarded(agent, 'agent/queued', (st) => driver.onQueued(st, message)))
      yield ctx.on('agent/cancel-requested', (agent: Agent, reason: CancelReason) => driver.guarded(agent, 'agent/cancel-requested', (st) => driver.onCancel(st, reason)))
      yield ctx.on('agent/turn-start', (agent: Agent, turn: number, messages: UserMessage[]) => driver.guarded(agent, 'agent/turn-start', (st) => driver.onTurnStart(st, turn, messages)))
      yield ctx.on('agent/turn-end', (agent: Agent, turn: number, outcome: TurnOutcome) => driver.guarded(agent, 'agent/turn-end', (st) => driver.onTurnEnd(st, turn, outcome)))
      yield ctx.on('agent/error', (agent: Agent, turn: number | undefined, error: AgentErrorInfo) => driver.guarded(agent, 'agent/error', (st) => driver.onError(st, turn, error)))
      yield ctx.on('agent/status', (agent: Agent, status: AgentStatus) => driver.guarded(agent, 'agent/status', (st) => driver.onStatus(st, status)))
      yield ctx.on('agent/session-start', (agent: Agent, source: 'new' | 'resume' | 'fork') => driver.guarded(agent, 'agent/session-start', (st) => driver.onSessionStart(st, source)))
      yield ctx.on('agent/disposed', (agent: Agent) => driver.onDisposed(agent))
      yield ctx.on('goal/changed', (agent: Agent) => driver.guarded(agent, 'goal/changed', (st) => driver.onGoalChanged(st)))
      yield ctx.on('goal/activation', (agent: Agent, activation: GoalActivation) => driver.guarded(agent, 'goal/activation', (st) => driver.onActivation(st, activation)))
      yield ctx.on('session/event', (session: Session, record: SessionRecord) => driver.onSessionEvent(session, record))
      // Runs first on unload, while every listener above is still installed.
      yield () => driver.shutdown()
    }, 'goal-session')
    this.disarmLoaded()
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

  reservationOf(agent: { id: string }): Reservation | undefined {
    return this.states.get(agent.id)?.reservation
  }

  goalOf(agent: { id: string }): GoalState | undefined {
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

  fail(agent: { id: string }, where: string, error: unknown): void {
    this.logger.error('%s failed for agent %s: %s', where, agent.id, describeError(error))
    this.actions.disarm(agent, `${where} failed`)
  }

  private dropReservation(st: AgentState, res: Reservation): void {
    if (st.reservation === res) st.reservation = undefined
    res.release()
  }

  // --- triggers --------------------------------------------------------------------------------

  private onGoalChanged(st: AgentState): void {
    st.checkpointOwed = true
    this.schedule(st)
  }

  private onActivation(st: AgentState, activation: GoalActivation): void {
    if (activation !== 'armed') return
    // Arming is a fresh human decision: whatever went wrong before it is not held against it.
    st.unadmitted = 0
    this.schedule(st)
  }

  private onStatus(st: AgentState, status: AgentStatus): void {
    if (status !== 'idle') return
    const res = st.reservation
    if (res) {
      if (res.turn !== undefined) this.settle(st, res)
      else if (res.phase !== 'sending' && !st.agent.queued.some((m) => m.id === res.id)) this.endUnadmitted(st, res)
    }
    this.schedule(st)
  }

  private onQueued(st: AgentState, message: UserMessage): void {
    const res = st.reservation
    // The id is chosen before `send`, so even the event fired inside it tells the reservation from a copy.
    if (!res || res.phase === 'admitted' || message.id === res.id) return
    // Human precedence: input that arrives while the round waits runs first; the round is re-reserved after it.
    res.stale = true
    this.logger.debug('goal round %d of agent %s is stale: other input was queued', res.source.round, st.agent.id)
  }

  private onSessionEvent(session: Session, record: SessionRecord): void {
    if (record.type !== 'input/rejected' && record.type !== 'input/cancelled') return
    const st = this.states.get(session.id)
    const res = st?.reservation
    if (!st || !res || res.turn !== undefined) return
    if ((record.data as { messageId?: unknown } | undefined)?.messageId !== res.id) return
    try {
      this.endUnadmitted(st, res)
    } catch (error) {
      this.fail(st.agent, 'session/event', error)
    }
  }

  private onSessionStart(st: AgentState, source: 'new' | 'resume' | 'fork'): void {
    // The goal package loads sessions disarmed; this keeps the rule even if a goal were armed early.
    if (source !== 'new') this.actions.disarm(st.agent, `session ${source}`)
  }

  private onDisposed(agentLike: { id: string }): void {
    const st = this.states.get(agentLike.id)
    if (!st) return
    this.states.delete(agentLike.id)
    // Activation is process-local and goes with the agent; the goal package forgets it too.
    if (st.reservation) this.dropReservation(st, st.reservation)
  }

  // --- round bookkeeping ---------------------------------------------------------------------------

  private onTurnStart(st: AgentState, turn: number, messages: UserMessage[]): void {
    const res = st.reservation
    // A human turn is someone at work, not a stuck driver: the streak starts again after it.
    if (messages.some((m) => m.source?.kind === 'human' || m.id === res?.id)) st.unadmitted = 0
    if (!res || !messages.some((m) => m.id === res.id)) return
    res.turn = turn
    this.logger.info('goal round %d/%s of agent %s started (turn %d)', res.source.round, this.goalOf(st.agent)?.maxGoalRounds ?? '?', st.agent.id, turn)
  }

  private onTurnEnd(st: AgentState, turn: number, outcome: TurnOutcome): void {
    const res = st.reservation
    if (!res || res.turn !== turn) return
    res.outcome = outcome
    res.release()
  }

  private onError(st: AgentState, turn: number | undefined, error: AgentErrorInfo): void {
    if (error?.code !== 'FLUSH_FAILED') return
    // Whatever turn it belongs to: the log may not hold what the goal state says, so stop. A round's
    // settlement at idle then finds the goal disarmed and leaves it so.
    this.actions.disarm(st.agent, `the session flush after turn ${turn} failed`)
  }

  private onCancel(st: AgentState, reason: CancelReason): void {
    if (this.closed) return
    const res = st.reservation
    if (res && !res.cancelled && res.outcome === undefined) {
      res.cancelled = true
      const goal = this.goalOf(st.agent)
      if (!goalMoved(goal, res.source)) {
        this.actions.pause(st.agent, { id: res.source.goalId, revision: res.source.revision }, `round ${res.source.round} was cancelled (${reason})`)
      } else {
        // A policy stop changed the goal before cancelling; anything else still stops automatic work.
        this.actions.disarm(st.agent, `round ${res.source.round} was cancelled (${reason})`)
      }
      return
    }
    this.actions.disarm(st.agent, `other work was cancelled (${reason})`)
  }

  /** A reservation that will never open a turn: rejected, cancelled, or dropped at admission. */
  private endUnadmitted(st: AgentState, res: Reservation): void {
    if (st.reservation !== res) return
    this.dropReservation(st, res)
    if (res.phase === 'admitted' && !res.cancelled && !res.stale && !res.rejected) {
      this.rejectValidRound(st.agent, res, 'its turn never opened')
    }
    if (++st.unadmitted >= MAX_UNADMITTED && isRunnable(this.goalOf(st.agent))) {
      this.logger.error('goal rounds of agent %s were dropped %d times in a row before their turn opened; automatic rounds stop until a resume', st.agent.id, MAX_UNADMITTED)
      this.actions.disarm(st.agent, 'its rounds never got admitted')
      return
    }
    this.schedule(st)
  }

  /** The fence admitted a legal round and it still did not run: block, never retry. */
  rejectValidRound(agent: Agent, res: Reservation, why: string): void {
    if (res.rejected || res.cancelled) return
    res.rejected = true
    const moved = goalMoved(this.goalOf(agent), res.source)
    if (moved) {
      this.logger.info('goal round %d of agent %s was not admitted (%s); %s', res.source.round, agent.id, why, moved)
      return
    }
    this.actions.block(agent, { id: res.source.goalId, revision: res.source.revision }, {
      code: DRIVER_BLOCK_CODES.promptRejected,
      message: `Goal round ${res.source.round} was not admitted: ${why}.`,
    })
  }

  /** At idle after the round's turn: the outcome, the post-turn flush and any cancel are all known. */
  private settle(st: AgentState, res: Reservation): void {
    this.dropReservation(st, res)
    if (res.cancelled || res.rejected) return
    const agent = st.agent
    const action = settleRound(res.outcome)
    if (action.kind === 'disarm') return this.actions.disarm(agent, action.why)
    const moved = goalMoved(this.goalOf(agent), res.source)
    if (moved) {
      this.logger.debug('goal round %d of agent %s ended; %s, so that change stands', res.source.round, agent.id, moved)
      return
    }
    const ref = { id: res.source.goalId, revision: res.source.revision }
    if (action.kind === 'pause') this.actions.pause(agent, ref, `round ${res.source.round} was aborted`)
    else if (action.kind === 'block') this.actions.block(agent, ref, action.reason)
  }

  // --- scheduling ------------------------------------------------------------------------------

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
            this.logger.error('checkpoint flush of session %s failed: %s', st.agent.id, describeError(error))
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
    if (st.reservation || agent.queued.length > 0) return
    const goal = this.goalOf(agent)
    return isRunnable(goal) ? goal : undefined
  }

  private startRound(st: AgentState, goal: GoalState): void {
    const agent = st.agent
    const ref = { id: goal.id, revision: goal.revision }
    if (goal.roundsStarted >= goal.maxGoalRounds) {
      this.actions.block(agent, ref, {
        code: DRIVER_BLOCK_CODES.roundLimit,
        message: `The goal used all ${goal.maxGoalRounds} rounds without being completed.`,
      })
      return
    }
    const round = goal.roundsStarted + 1
    const source: GoalRoundSource = { kind: 'goal', goalId: goal.id, revision: goal.revision, round }
    const res = newReservation(randomUUID(), source, [{ type: 'text', text: renderGoalRoundPrompt(goal, round) }])
    st.reservation = res
    try {
      agent.send({ id: res.id, content: res.content.map((b) => ({ ...b })), source: { ...source } })
    } catch (error) {
      this.dropReservation(st, res)
      this.logger.error('queueing goal round %d of agent %s failed: %s', round, agent.id, describeError(error))
      this.actions.block(agent, ref, { code: DRIVER_BLOCK_CODES.queueFailed, message: `Queueing goal round ${round} failed.` })
      return
    }
    // A listener of `agent/queued` may have cancelled it inside `send`.
    if (st.reservation !== res) return
    res.phase = 'queued'
    this.logger.debug('goal round %d of agent %s reserved', round, agent.id)
  }

  // --- lifecycle ------------------------------------------------------------------------------

  /** A goal that was armed before the driver existed never runs without a fresh human resume. */
  private disarmLoaded(): void {
    let agents: Agent[] = []
    try {
      agents = this.ctx.agents.list()
    } catch (error) {
      this.logger.error('listing agents at load failed: %s', describeError(error))
    }
    for (const agent of agents) this.actions.disarm(agent, 'the round driver was loaded')
  }

  /** Close admission, disarm, cancel an admitted round, wait for quiescence; listeners go after this. */
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
      const res = st.reservation
      if (!res || st.agent.disposed) continue
      // Scoped to the round's turn so queued human input survives; a round whose turn has not opened
      // yet is vetoed by the last word, and one still waiting is dropped by the closed fence.
      if (res.turn !== undefined && res.outcome === undefined) {
        try {
          st.agent.cancel('parent', { turn: res.turn })
        } catch (error) {
          this.logger.error('cancelling goal round %d of agent %s failed: %s', res.source.round, st.agent.id, describeError(error))
        }
      }
      waits.push(res.released)
      settleAgents.push(st.agent)
    }
    await Promise.allSettled(waits)
    // The round is over; wait for its post-turn flush unless human work is already queued behind it.
    await Promise.allSettled(settleAgents.filter((a) => !a.disposed && a.queued.length === 0).map((a) => a.whenIdle()))
    this.states.clear()
  }
}

/** A goal the driver runs rounds for: active and armed. */
function isRunnable(goal: GoalState | undefined): goal is GoalState {
  return goal?.phase === 'active' && goal.activation === 'armed'
}

function isAgent(value: { id: string }): value is Agent {
  return typeof (value as Agent).send === 'function' && typeof (value as Agent).whenIdle === 'function'
}
