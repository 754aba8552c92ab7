import type { Context, Logger } from 'cordis'
import type { Agent, AgentErrorInfo, AgentStatus, CancelReason, PromptDecision, Submission } from '@goalkeeper/agent-loop'
import type { GoalActivation, GoalState } from '@goalkeeper/goal'
import { isRecordOf, type Session, type SessionRecord, type TurnOutcome, type UserMessage } from '@goalkeeper/session'
import { describeError, untraced } from '@goalkeeper/kit'
import { AgentRounds, type RoundsHost } from './agent-rounds.ts'
import { GoalActions } from './goal-actions.ts'
import type { DriverRound, GoalDriver } from './types.ts'

/**
 * Turns an active, armed goal into sequential rounds in the same session (DESIGN.md section 9). Whether a
 * round is legal is the goal plugin's question; the driver asks only whether a goal-sourced message is its
 * own round, unaltered and still current. The driver holds the listeners and one `AgentRounds` per agent,
 * which does the work; `install` sets up everything in one effect.
 */
export class RoundDriver implements GoalDriver, RoundsHost {
  readonly logger: Logger
  readonly actions: GoalActions
  /**
   * Taken once: all three are injected, so they outlive the driver, and every `ctx.<service>` read goes
   * through Cordis's context proxy (an Error with its stack each time), several times a round.
   */
  readonly goals: Context['goals']
  readonly sessions: Context['sessions']
  private readonly agents: Context['agents']
  /** The unload has begun: admission is closed and nothing new is scheduled. */
  closed = false
  private states = new Map<string, AgentRounds>()
  /** The unload's wait for quiescence. */
  private stopped?: Promise<void>

  constructor(readonly ctx: Context) {
    this.logger = ctx.logger('goal-session')
    // Without the tracing proxy too: the driver only asks, mutates and flushes, for itself.
    this.goals = untraced(ctx.goals)
    this.sessions = untraced(ctx.sessions)
    this.agents = untraced(ctx.agents)
    this.actions = new GoalActions(this.goals, this.logger)
  }

  install(): void {
    const driver = this
    const ctx = this.ctx
    ctx.effect(function* () {
      // Prepended after the goal plugin's listener, so the fence is the outermost one and sees the final decision.
      yield ctx.on('agent/prompt-submit', (agent: Agent, submission: Submission, next: () => Promise<PromptDecision>) => driver.held(agent).fence(submission, next), { prepend: true })
      yield ctx.on('agent/admit', (agent: Agent, message: UserMessage) => driver.held(agent).veto(message))
      yield ctx.on('agent/queued', (agent: Agent, message: UserMessage) => driver.guarded(agent, 'agent/queued', (r) => r.onQueued(message)))
      yield ctx.on('agent/turn-start', (agent: Agent, turn: number, messages: UserMessage[]) => driver.guarded(agent, 'agent/turn-start', (r) => r.onTurnStart(turn, messages)))
      yield ctx.on('agent/turn-end', (agent: Agent, turn: number, outcome: TurnOutcome) => driver.guarded(agent, 'agent/turn-end', (r) => r.onTurnEnd(turn, outcome)))
      yield ctx.on('agent/cancel-requested', (agent: Agent, reason: CancelReason) => driver.guarded(agent, 'agent/cancel-requested', (r) => r.onCancel(reason)))
      yield ctx.on('session/event', (session: Session, record: SessionRecord) => driver.onSessionEvent(session, record))
      yield ctx.on('agent/error', (agent: Agent, turn: number | undefined, error: AgentErrorInfo) => driver.guarded(agent, 'agent/error', (r) => r.onError(turn, error)))
      yield ctx.on('agent/status', (agent: Agent, status: AgentStatus) => driver.guarded(agent, 'agent/status', (r) => r.onStatus(status)))
      yield ctx.on('goal/changed', (agent: Agent) => driver.guarded(agent, 'goal/changed', (r) => r.onGoalChanged()))
      yield ctx.on('goal/activation', (agent: Agent, activation: GoalActivation) => driver.guarded(agent, 'goal/activation', (r) => r.onActivation(activation)))
      yield ctx.on('agent/disposed', (agent: Agent) => driver.onDisposed(agent))
      yield ctx.provide('goalDriver', {
        current: (agent: { readonly id: string }) => driver.current(agent),
        whenSettled: (agent: { readonly id: string }) => driver.whenSettled(agent),
      } satisfies GoalDriver)
      // Runs first on unload, while every listener above is still installed.
      yield () => driver.shutdown()
    }, 'goal-session')
    this.disarmLoaded()
  }

  current(agent: { readonly id: string }): DriverRound | undefined {
    const round = this.states.get(agent?.id)?.round
    return round && { ...round.identity, state: round.state.kind }
  }

  whenSettled(agentLike: { readonly id: string }): Promise<GoalState | undefined> {
    const agent = this.resolve(agentLike)
    // A driver that unloads or is gone starts nothing; its unload ends the round in flight, if any. A microtask
    // later, since a listener reacting to the unload's first steps may ask before `stopped` is set.
    if (this.closed) return Promise.resolve().then(() => this.stopped).then(() => this.goalOf(agentLike))
    if (!agent) return Promise.resolve(this.goalOf(agentLike))
    return this.rounds(agent).whenSettled()
  }

  // --- routing events to the agent's rounds ------------------------------------------------------

  /** The live agent behind an event argument (goal events may carry a tool's view of it). */
  private resolve(agentLike: { id: string }): Agent | undefined {
    let agent = this.states.get(agentLike.id)?.agent
    if (!agent || agent.disposed) {
      try {
        agent = this.agents.get(agentLike.id)
      } catch {
        agent = undefined
      }
    }
    if (!agent && isAgent(agentLike)) agent = agentLike
    return agent && !agent.disposed ? agent : undefined
  }

  /** The rounds of this very agent object (a resumed session is a new agent with the same id). */
  private rounds(agent: Agent): AgentRounds {
    let rounds = this.states.get(agent.id)
    if (!rounds || rounds.agent !== agent) {
      // A waiter on the agent this one replaced waits for nothing more.
      rounds?.release()
      rounds = new AgentRounds(agent, this)
      this.states.set(agent.id, rounds)
    }
    return rounds
  }

  /** The rounds held for this session id, for admission: the agent loop passes itself. */
  private held(agent: Agent): AgentRounds {
    return this.states.get(agent.id) ?? this.rounds(agent)
  }

  /** Runs a listener body; a failure is logged and stops automatic work for that agent. */
  private guarded(agentLike: { id: string }, where: string, body: (rounds: AgentRounds) => void): void {
    const agent = this.resolve(agentLike)
    if (!agent) return
    const rounds = this.rounds(agent)
    try {
      body(rounds)
    } catch (error) {
      rounds.fail(where, error)
    }
    rounds.poke()
  }

  private onSessionEvent(session: Session, record: SessionRecord): void {
    if (!isRecordOf(record, 'input/rejected', 'input/cancelled')) return
    const rounds = this.states.get(session.id)
    if (!rounds) return
    // Its own round's message is gone; any input leaving the inbox may also bring the agent to rest.
    if (rounds.waitsFor(record.data.messageId)) this.guarded(session, 'session/event', (r) => r.onMessageGone(record.data.messageId))
    else rounds.poke()
  }

  private goalOf(agent: { id: string }): GoalState | undefined {
    try {
      return this.goals.get(agent)
    } catch {
      return undefined
    }
  }

  // --- lifecycle ------------------------------------------------------------------------------

  private onDisposed(agentLike: { id: string }): void {
    const rounds = this.states.get(agentLike.id)
    if (!rounds) return
    this.states.delete(agentLike.id)
    rounds.forget()
  }

  /** A goal that was armed before the driver existed never runs without a fresh human resume. */
  private disarmLoaded(): void {
    let agents: Agent[] = []
    try {
      agents = this.agents.list()
    } catch (error) {
      this.logger.error('listing agents at load failed: %s', describeError(error, { stack: true }))
    }
    for (const agent of agents) this.actions.disarm(agent, 'the round driver was loaded')
  }

  /** Close admission, disarm, cancel a running round, wait for quiescence; listeners go after this. */
  private shutdown(): Promise<void> {
    this.closed = true
    return (this.stopped = this.stop())
  }

  private async stop(): Promise<void> {
    const held = [...this.states.values()]
    let agents: Agent[] = held.map((rounds) => rounds.agent)
    try {
      agents = [...new Set([...agents, ...this.agents.list()])]
    } catch {
      // the agents service may already be gone in a whole-tree shutdown
    }
    for (const agent of agents) if (!agent.disposed) this.actions.disarm(agent, 'the round driver is unloading')
    await Promise.allSettled(held.map((rounds) => rounds.unload()))
    for (const rounds of this.states.values()) rounds.release()
    this.states.clear()
  }
}

function isAgent(value: { id: string }): value is Agent {
  return typeof (value as Agent).send === 'function' && typeof (value as Agent).whenIdle === 'function'
}
