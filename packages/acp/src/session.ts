import { RequestError, type AgentContext, type AvailableCommand, type ContentBlock as AcpContentBlock, type PromptResponse, type SessionUpdate } from '@agentclientprotocol/sdk'
import type { Agent } from '@goalkeeper/agent-loop'
import { isRunnable, type GoalState } from '@goalkeeper/goal'
import { interruptWork } from '@goalkeeper/goal-session'
import { describeError } from '@goalkeeper/kit'
import { isRecordOf, nextSeqOf, type TurnOutcome } from '@goalkeeper/session'
import { executeGoalCommand, parseGoalCommand, type GoalCommandResult, type ParsedGoalCommand } from '@goalkeeper/tool-goal'
import type { Context, Logger } from 'cordis'
import { ErrorCodes, toRequestError } from './errors.ts'
import { GoalView, type GoalSnapshot } from './goal-view.ts'
import { commandText, promptContent, stopReasonOf } from './prompt.ts'
import { RecordTranslator } from './updates.ts'

/** What a session needs of the connection it is served on. */
export interface SessionHost {
  ctx: Context
  client: AgentContext
  logger: Logger
  /** The secret masker's rule, applied to streamed text before it is split into updates. */
  mask: (text: string) => string
  /** Characters of streamed text held back so that no secret leaves in pieces (see HeldText). */
  hold: number
  /** A context that injects `goals` (what the `/goal` command runs on), while the goal plugin is loaded. */
  goalContext(): Context | undefined
}

/** The `/goal` command as a client lists it (`available_commands_update`). */
export const GOAL_COMMAND: AvailableCommand = {
  name: 'goal',
  description: 'Set, show or steer the session goal: an objective worked on in automatic rounds until it is complete, blocked, paused or out of rounds',
  input: { hint: '<objective> | until <condition> | pause | resume | clear | edit <objective> | --max-rounds N <objective>' },
}

/** How the message a prompt sent ended before or in its turn. */
type Fate = { kind: 'answered'; outcome: TurnOutcome } | { kind: 'cancelled' } | { kind: 'rejected'; reason: string }

/** One open `session/prompt` request, answered once its work is over. */
interface PromptWait {
  /** The message the prompt sent; absent for a `/goal` command that started rounds. */
  messageId?: string
  /** Seq of the first record after the prompt was taken; its turns are the ones from there. */
  fromSeq: number
  /** Seq of the next record to look at (a seq, since a live session lets go of records before a checkpoint). */
  cursor: number
  ownTurn?: number
  fate?: Fate
  cancelRequested: boolean
  resolve(result: PromptResponse | RequestError): void
}

/**
 * One goalkeeper agent served to an ACP client: it follows the agent's session log and streams it as
 * session updates, answers prompts when their work is over, and maps `session/cancel` to what Ctrl-C does
 * in the CLI.
 */
export class AcpSession {
  readonly id: string
  private translator: RecordTranslator
  private goalView = new GoalView()
  private outbox: Promise<void> = Promise.resolve()
  private waits = new Set<PromptWait>()
  private stops: (() => void)[] = []
  private cursor = 0
  private lastGoal = ''
  private checkQueued = false
  private notifyFailed = false
  private detached = false

  constructor(private host: SessionHost, readonly agent: Agent) {
    this.id = agent.id
    this.translator = this.newTranslator()
  }

  /** Tools are looked up when a call is shown: one registered after the session began is described too. */
  private newTranslator(): RecordTranslator {
    return new RecordTranslator(this.cwd, this.host.mask, this.host.hold, (name) => this.host.ctx.get('tools')?.get(name))
  }

  get cwd(): string {
    return this.agent.session.header.cwd
  }

  private get goals() {
    return this.host.ctx.get('goals')
  }

  private liveGoal(): GoalState | undefined {
    return this.goals?.get(this.agent)
  }

  /** Starts following the session; with `replay` the records it has so far are sent first, as a client loading it expects. */
  attach(replay: boolean): void {
    const { ctx } = this.host
    const is = (agent: { id: string }) => agent.id === this.id
    this.stops.push(
      ctx.on('session/event', (session) => {
        if (session.id === this.id) this.catchUp()
      }),
      ctx.on('agent/text-delta', (agent, turn, step, text) => {
        if (is(agent)) this.push(this.translator.textDelta(turn, step, text))
      }),
      // Streamed reasoning, where the provider streams it; otherwise it comes with the assistant message.
      ctx.on('agent/reasoning-delta', (agent, turn, step, text) => {
        if (is(agent)) this.push(this.translator.reasoningDelta(turn, step, text))
      }),
      ctx.on('goal/activation', (agent) => {
        if (!is(agent)) return
        this.publishGoal()
        this.scheduleCheck()
      }),
      ctx.on('agent/status', (agent) => is(agent) && this.scheduleCheck()),
      ctx.on('agent/disposed', (agent) => is(agent) && this.scheduleCheck()),
    )
    if (ctx.get('goalDriver') === undefined) this.host.logger.debug('no goal round driver is loaded: goals do not run rounds on their own')
    this.replay(replay)
  }

  /** Sends the records seen so far (as updates when `send`), and takes the live stream from there. */
  replay(send: boolean): void {
    const { session } = this.agent
    // A second load of a session already followed replays with a translator of its own, so the live one keeps its state.
    const translator = this.cursor ? this.newTranslator() : this.translator
    // `cursor` is a seq: `records` start at `firstSeq`, which a live session moves on at its checkpoints.
    for (const record of session.records) {
      if (record.seq >= this.cursor) this.goalView.observe(record)
      if (send) for (const update of translator.translate(record, true)) this.push(update)
    }
    this.cursor = Math.max(this.cursor, nextSeqOf(session))
    if (send) this.lastGoal = ''
  }

  /** What a client shows next to a session: the `/goal` command and the goal. Sent after new and load. */
  announce(): Promise<void> {
    if (this.goals) this.push({ sessionUpdate: 'available_commands_update', availableCommands: [GOAL_COMMAND] })
    this.publishGoal()
    return this.flushed()
  }

  /** Resolves when every update queued so far has been handed to the connection. */
  flushed(): Promise<void> {
    return this.outbox
  }

  private push(update: SessionUpdate | undefined): void {
    if (this.detached || !update) return
    this.outbox = this.outbox
      .then(() => this.host.client.notify('session/update', { sessionId: this.id, update }))
      .catch((error) => {
        // A client that went away fails every later update too: one line says so.
        if (this.notifyFailed) return
        this.notifyFailed = true
        this.host.logger.warn('session %s: an update could not be sent: %s', this.id, describeError(error))
      })
  }

  /** Takes the records appended since the last look, in order (also called to be up to date before answering). */
  private catchUp(): void {
    if (this.detached) return
    const { session } = this.agent
    this.cursor = Math.max(this.cursor, session.firstSeq)
    while (this.cursor < nextSeqOf(session)) {
      const record = session.records[this.cursor++ - session.firstSeq]
      for (const update of this.translator.translate(record, false)) this.push(update)
      if (this.goalView.observe(record)) this.publishGoal()
    }
    this.scheduleCheck()
  }

  /** The goal as a plan and as `_meta.goal` of a session info update; nothing when it did not change. */
  private publishGoal(): void {
    const live = this.liveGoal()
    const snapshot = this.goalView.snapshot(live)
    const plan = this.goalView.plan(live)
    const key = JSON.stringify([snapshot, plan])
    if (key === this.lastGoal) return
    // Before the first goal there is nothing to show (an empty plan would clear one the client keeps).
    if (!this.lastGoal && !snapshot) {
      this.lastGoal = key
      return
    }
    this.lastGoal = key
    this.push({ sessionUpdate: 'plan', entries: plan })
    this.push({ sessionUpdate: 'session_info_update', _meta: { goal: snapshot } })
  }

  goalSnapshot(): GoalSnapshot | null {
    return this.goalView.snapshot(this.liveGoal())
  }

  /** Runs a `/goal` command (from a prompt or the extension method) and shows the goal after it. */
  runGoalCommand(command: ParsedGoalCommand): GoalCommandResult {
    const goalContext = this.host.goalContext()
    if (!goalContext) {
      return { ok: false, code: 'GOAL_UNAVAILABLE', message: 'Goals are not available: the composition does not load @goalkeeper/goal.' }
    }
    const result = executeGoalCommand(goalContext, this.agent, command)
    this.catchUp()
    this.publishGoal()
    return result
  }

  /** `session/prompt`: a human message, or a `/goal` command; resolves when its work is over. */
  async prompt(blocks: readonly AcpContentBlock[], signal: AbortSignal): Promise<PromptResponse> {
    if (this.agent.disposed) throw new RequestError(ErrorCodes.INTERNAL, `session ${this.id} is closed: its agent was shut down`)
    const content = promptContent(blocks, this.cwd)
    const line = commandText(content)
    const command = line === undefined ? undefined : parseGoalCommand(line)
    const fromSeq = nextSeqOf(this.agent.session)
    if (command) {
      const result = this.runGoalCommand(command)
      this.push({ sessionUpdate: 'agent_message_chunk', messageId: `goal-command-${fromSeq}`, content: { type: 'text', text: result.message } })
      const startsRounds = result.ok && (command.kind === 'create' || command.kind === 'resume') && this.goalRuns()
      if (!startsRounds) {
        await this.flushed()
        return { stopReason: 'end_turn' }
      }
      // The rounds the command started are this prompt's work: it is answered when they are over.
      return this.settle({ fromSeq, cursor: fromSeq, cancelRequested: false, resolve: () => {} }, signal)
    }
    const wait: PromptWait = { fromSeq, cursor: fromSeq, cancelRequested: false, resolve: () => {} }
    try {
      wait.messageId = this.agent.send({ content }).id
    } catch (error) {
      throw toRequestError(error)
    }
    return this.settle(wait, signal)
  }

  private settle(wait: PromptWait, signal: AbortSignal): Promise<PromptResponse> {
    return new Promise<PromptResponse>((resolve, reject) => {
      const onAbort = () => this.cancel()
      wait.resolve = (result) => {
        signal.removeEventListener('abort', onAbort)
        this.waits.delete(wait)
        if (result instanceof RequestError) reject(result)
        else resolve(result)
      }
      this.waits.add(wait)
      // A `$/cancel_request` for the prompt means what `session/cancel` means.
      signal.addEventListener('abort', onAbort, { once: true })
      this.scheduleCheck()
    })
  }

  /** `session/cancel`: what Ctrl-C does in the CLI. The running turn is cancelled (a goal round pauses its goal). */
  cancel(): void {
    for (const wait of this.waits) wait.cancelRequested = true
    try {
      interruptWork(this.agent, this.goals)
    } catch (error) {
      this.host.logger.warn('session %s: cancel failed: %s', this.id, describeError(error))
    }
    this.scheduleCheck()
  }

  /** Whether the goal will run rounds on its own: active, armed, and a driver loaded to run them. */
  private goalRuns(): boolean {
    return isRunnable(this.liveGoal()) && this.host.ctx.get('goalDriver') !== undefined
  }

  private atRest(): boolean {
    return this.agent.status === 'idle' && !this.agent.queued.length && !this.goalRuns()
  }

  private scheduleCheck(): void {
    if (this.checkQueued || !this.waits.size) return
    this.checkQueued = true
    // A microtask later, so that the other listeners of the same event (the round driver) have acted.
    queueMicrotask(() => {
      this.checkQueued = false
      this.checkWaits()
    })
  }

  private checkWaits(): void {
    const waits = [...this.waits]
    const latest = waits.at(-1)
    for (const wait of waits) {
      this.trackFate(wait)
      const gone = this.agent.disposed || this.detached
      const ownDone = wait.messageId === undefined || wait.fate !== undefined
      if (!gone && !ownDone) continue
      // The newest prompt also owns the goal rounds that follow it; older ones end with their own turn.
      if (!gone && wait === latest && !this.atRest()) continue
      this.waits.delete(wait)
      const result = this.resultOf(wait, wait === latest)
      void this.flushed().then(() => wait.resolve(result))
    }
  }

  private trackFate(wait: PromptWait): void {
    if (wait.messageId === undefined || wait.fate) return
    const { session } = this.agent
    let open: number | undefined = wait.ownTurn
    wait.cursor = Math.max(wait.cursor, session.firstSeq)
    while (!wait.fate && wait.cursor < nextSeqOf(session)) {
      const record = session.records[wait.cursor++ - session.firstSeq]
      if (isRecordOf(record, 'turn/start')) open = record.data.turn
      else if (isRecordOf(record, 'user/message') && record.data.id === wait.messageId) wait.ownTurn = open
      else if (isRecordOf(record, 'turn/end') && record.data.turn === wait.ownTurn) wait.fate = { kind: 'answered', outcome: record.data.outcome }
      else if (isRecordOf(record, 'input/cancelled') && record.data.messageId === wait.messageId) wait.fate = { kind: 'cancelled' }
      else if (isRecordOf(record, 'input/rejected') && record.data.messageId === wait.messageId) wait.fate = { kind: 'rejected', reason: String(record.data.reason) }
    }
  }

  private resultOf(wait: PromptWait, latest: boolean): PromptResponse | RequestError {
    if (wait.fate?.kind === 'rejected') {
      return new RequestError(ErrorCodes.INTERNAL, `the prompt was not admitted: ${wait.fate.reason}`, { code: 'PROMPT_REJECTED', reason: wait.fate.reason })
    }
    if (wait.cancelRequested || wait.fate?.kind === 'cancelled' || this.detached) return { stopReason: 'cancelled' }
    const outcome = latest ? this.lastOutcomeSince(wait.fromSeq) : wait.fate?.kind === 'answered' ? wait.fate.outcome : undefined
    const reason = stopReasonOf(outcome ?? (this.agent.disposed ? { kind: 'disposed' } : undefined))
    return reason instanceof RequestError ? reason : { stopReason: reason }
  }

  private lastOutcomeSince(seq: number): TurnOutcome | undefined {
    const { records, firstSeq } = this.agent.session
    for (let index = records.length - 1; index >= Math.max(0, seq - firstSeq); index--) {
      const record = records[index]
      if (isRecordOf(record, 'turn/end')) return record.data.outcome
    }
    return undefined
  }

  /**
   * The client went away: the running work stops as with Ctrl-C (a goal round pauses its goal, an armed
   * goal between rounds is paused), the session log is flushed, and the agent is shut down, so the session
   * can be loaded again, here or by the CLI.
   */
  async detach(): Promise<void> {
    if (this.detached) return
    this.detached = true
    for (const stop of this.stops.splice(0)) stop()
    try {
      interruptWork(this.agent, this.goals)
    } catch (error) {
      this.host.logger.warn('session %s: could not stop its work: %s', this.id, describeError(error))
    }
    for (const wait of [...this.waits]) wait.resolve({ stopReason: 'cancelled' })
    if (this.agent.disposed) return
    await this.agent.whenIdle()
    await this.agent.dispose()
  }
}
