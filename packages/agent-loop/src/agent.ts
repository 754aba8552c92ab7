import { describeError, dispatchIsolated, nextMacrotask } from '@goalkeeper/kit'
import type { Session, UserMessage } from '@goalkeeper/session'
import type { AgentStatus, CancelReason, CompactionResult, MessageInput, WrapUpOptions } from './types.ts'
import type { AgentCore, AgentSettings, LoopHost, PendingDecision } from './state.ts'
import type { InputsPart, SessionFold } from './fold.ts'
import type { HistoryPart } from './history.ts'
import { AgentLoopError } from './errors.ts'
import { HUMAN, STEER, toUserMessage } from './message.ts'
import { History } from './history.ts'
import { reject, rejectCancelled, submitBatch, vetoOnAdmit } from './admission.ts'
import { Turn } from './turn.ts'
import { compactHistory } from './compaction.ts'
import { buildRequest } from './request.ts'

const CANCEL_REASONS: readonly CancelReason[] = ['user', 'parent', 'shutdown', 'policy']

/**
 * What an agent is doing. The public status follows from it alone: `idle` while idle or scheduled, `running`
 * from the moment a batch is taken until the loop has nothing left.
 */
type Phase =
  | { kind: 'idle' }
  /** The inbox is taken as a batch in a later macrotask. */
  | { kind: 'scheduled'; timer: NodeJS.Immediate }
  /** A batch is under `agent/prompt-submit`, then `agent/admit`, until its turn opens. */
  | { kind: 'deciding'; decision: PendingDecision }
  /** A turn is open: steered messages join it, a cancel aborts it. */
  | { kind: 'running'; turn: Turn }
  /** No batch and no open turn, yet the loop goes on: a turn closed (its `turn/end`, listeners, flush) or a decision opened none. */
  | { kind: 'between' }
  /** `compact()` on an idle agent: input waits until it ends; a cancel or dispose aborts it. */
  | { kind: 'compacting'; controller: AbortController }

export class LoopAgent implements AgentCore {
  disposed = false
  readonly history: History
  readonly contextLimits = new Map<string, number>()
  checkpointWanted = false
  private phase: Phase = { kind: 'idle' }
  private inbox: UserMessage[]
  private nextTurn: number
  private knownIds: Set<string>
  /** The running (or last) drive of the loop, awaited by dispose. */
  private loop: Promise<void> = Promise.resolve()
  private idleWaiters: (() => void)[] = []
  private disposing?: Promise<void>

  constructor(
    readonly host: LoopHost,
    readonly session: Session,
    readonly model: string,
    readonly settings: AgentSettings,
    fold: SessionFold,
    restored: UserMessage[],
  ) {
    this.history = new History(session)
    this.nextTurn = fold.nextTurn
    this.knownIds = fold.knownIds
    this.inbox = restored
  }

  get id() { return this.session.id }
  get queued(): readonly UserMessage[] { return Object.freeze(this.inbox.slice()) }
  get turn() { return this.phase.kind === 'running' ? this.phase.turn.number : undefined }
  get status(): AgentStatus { return this.phase.kind === 'idle' || this.phase.kind === 'scheduled' ? 'idle' : 'running' }

  send(input: MessageInput): UserMessage {
    this.assertUsable('send')
    const message = this.claim(toUserMessage(input, HUMAN))
    // Queued before it is recorded: a listener of the record (`session/event`) already finds it in the inbox.
    this.inbox.push(message)
    try {
      this.session.append('input/queued', { message })
    } catch (error) {
      // Nothing was recorded (append throws before its listeners run), so nothing else saw the message.
      this.inbox.pop()
      this.knownIds.delete(message.id)
      throw error
    }
    dispatchIsolated(this.host.ctx, 'agent/queued', this, message)
    this.wake()
    return message
  }

  /**
   * With a turn open the message joins its next step; otherwise it is queued like `send`.
   * Steered messages skip `agent/prompt-submit`, so only plugin sources are accepted: a human or goal
   * source here would let a plugin forge authority or a goal round past the admission fences.
   */
  steer(input: MessageInput): UserMessage {
    this.assertUsable('steer')
    const candidate = toUserMessage(input, STEER)
    if (candidate.source.kind !== 'plugin') {
      throw new AgentLoopError('INVALID_MESSAGE', `steer() takes plugin-sourced messages only, not ${candidate.source.kind}; use send() for human or goal input`)
    }
    if (this.phase.kind !== 'running') return this.send(candidate)
    const message = this.claim(candidate)
    this.phase.turn.steer(message)
    return message
  }

  /** Takes the inbox as a batch in a later macrotask; needed for inputs restored by `resume`, which do not wake. */
  wake(): boolean {
    if (this.disposed || !this.inbox.length) return false
    if (this.phase.kind !== 'idle') return true
    this.setPhase({ kind: 'scheduled', timer: setImmediate(() => { this.loop = this.drive() }) })
    return true
  }

  preempt(turn: number, cause: string): boolean {
    if (typeof cause !== 'string' || !cause.trim()) {
      throw new AgentLoopError('INVALID_OPTIONS', `preempt cause must be a non-empty string, got ${JSON.stringify(cause)}`)
    }
    if (this.disposed) return false
    const { phase } = this
    if (phase.kind !== 'running' || phase.turn.number !== turn || phase.turn.stopped || phase.turn.yielding) return false
    phase.turn.preempt(cause)
    return true
  }

  wrapUp(turn: number, options: WrapUpOptions): boolean {
    const { by, reason, modelCalls = 0, fromStep } = options ?? ({} as WrapUpOptions)
    if (typeof by !== 'string' || !by.trim() || typeof reason !== 'string' || !reason.trim()) {
      throw new AgentLoopError('INVALID_OPTIONS', 'wrapUp needs a non-empty `by` and `reason`')
    }
    if (modelCalls !== 0 && modelCalls !== 1) throw new AgentLoopError('INVALID_OPTIONS', `wrapUp modelCalls must be 0 or 1, got ${JSON.stringify(modelCalls)}`)
    if (fromStep !== undefined && (!Number.isInteger(fromStep) || fromStep < 1)) {
      throw new AgentLoopError('INVALID_OPTIONS', `wrapUp fromStep must be a positive integer, got ${JSON.stringify(fromStep)}`)
    }
    if (this.disposed) return false
    const { phase } = this
    if (phase.kind !== 'running' || phase.turn.number !== turn || phase.turn.stopped) return false
    phase.turn.wrapUp({ by, reason, modelCalls, fromStep })
    return true
  }

  cancel(reason: CancelReason, options: { turn?: number } = {}): boolean {
    if (!CANCEL_REASONS.includes(reason)) {
      throw new AgentLoopError('INVALID_CANCEL_REASON', `cancel reason must be one of ${CANCEL_REASONS.join(', ')}, got ${JSON.stringify(reason)}`)
    }
    if (this.disposed) return false
    const { phase } = this
    const open = phase.kind === 'running' && !phase.turn.stopped ? phase.turn : undefined
    if (options.turn !== undefined) {
      // A targeted cancel (policy plugins) stops only that turn and keeps the inbox.
      if (!open || open.number !== options.turn) return false
      dispatchIsolated(this.host.ctx, 'agent/cancel-requested', this, reason)
      open.stop({ kind: 'aborted', cause: reason })
      return true
    }
    // Only inputs queued now are removed: work a listener queues in response survives.
    const queued = this.inbox.slice()
    const deciding = phase.kind === 'deciding' && !phase.decision.abandoned && phase.decision.batch.length ? phase.decision : undefined
    const compacting = phase.kind === 'compacting' && !phase.controller.signal.aborted ? phase.controller : undefined
    if (!queued.length && !deciding && !open && !compacting) return false
    dispatchIsolated(this.host.ctx, 'agent/cancel-requested', this, reason)
    compacting?.abort()
    for (const message of queued) {
      const index = this.inbox.indexOf(message)
      if (index < 0) continue
      this.inbox.splice(index, 1)
      this.session.append('input/cancelled', { messageId: message.id, reason })
    }
    if (deciding && !deciding.abandoned) {
      deciding.abandoned = true
      for (const message of deciding.batch) reject(this, message, rejectCancelled(reason))
    }
    if (open && !open.stopped) open.stop({ kind: 'aborted', cause: reason })
    return true
  }

  async compact(): Promise<CompactionResult> {
    this.assertUsable('compact')
    if (this.phase.kind !== 'idle') return { kind: 'unchanged', why: 'the agent is busy; compact when it is idle' }
    const provider = this.host.models.get(this.model)
    if (!provider) return { kind: 'unchanged', why: `model provider "${this.model}" is not registered` }
    const controller = new AbortController()
    this.setPhase({ kind: 'compacting', controller })
    // The last turn's opening prompts stay pinned, as they would in its next step.
    const scope = { agent: this, turn: this.nextTurn - 1, step: 0, provider, signal: controller.signal }
    const run = compactHistory(scope, buildRequest(this), 'request')
    this.loop = run.then(() => {}, () => {})
    try {
      return await run
    } finally {
      this.checkpointIfDue()
      this.settle()
    }
  }

  /** What a checkpoint holds of this agent: its history and its inputs, as of the session's last record. */
  checkpointPart(): { history: HistoryPart; inputs: InputsPart } {
    return { history: this.history.part(), inputs: { nextTurn: this.nextTurn, knownIds: [...this.knownIds], pending: this.inbox.slice() } }
  }

  /** Between turns: writes a checkpoint if a compaction asked for one or enough records passed since the last. */
  checkpointIfDue() {
    const { sessions, logger } = this.host
    if (this.session.closed || this.session.readOnly) return
    if (!this.checkpointWanted && !sessions.checkpointDue(this.session)) return
    try {
      if (sessions.checkpoint(this.session, this.checkpointWanted ? 'compaction' : 'interval')) this.checkpointWanted = false
    } catch (error) {
      logger.warn('%s: no checkpoint written: %s', this.id, describeError(error))
    }
  }

  whenIdle(): Promise<void> {
    if (this.phase.kind === 'idle') return Promise.resolve()
    return new Promise((resolve) => this.idleWaiters.push(resolve))
  }

  dispose(): Promise<void> {
    return this.disposing ??= this.teardown()
  }

  private async drive() {
    try {
      while (this.inbox.length && !this.disposed) {
        // Taken before `agent/status` is emitted, so a listener's cancel finds it under decision.
        const decision: PendingDecision = { batch: this.inbox.splice(0), abandoned: false }
        this.setPhase({ kind: 'deciding', decision })
        await submitBatch(this, decision)
        // The batch stays under decision until `runTurn` opens its turn, synchronously, right after this.
        const admitted = decision.abandoned ? [] : vetoOnAdmit(this, decision)
        if (admitted.length) await this.flushAfter(await this.runTurn(admitted))
        else this.setPhase({ kind: 'between' })
        // Inputs queued meanwhile form the next batch, taken in a later macrotask like the first one.
        if (this.inbox.length && !this.disposed) await nextMacrotask()
      }
    } catch (error) {
      this.host.logger.error('%s: agent loop failed: %s', this.id, describeError(error, { stack: true }))
      dispatchIsolated(this.host.ctx, 'agent/error', this, this.turn, { code: 'INTERNAL', message: describeError(error), cause: error })
    } finally {
      this.settle()
    }
  }

  /** Runs one turn (DESIGN.md section 6) up to `agent/turn-end`; the caller flushes afterwards. Returns its number. */
  private async runTurn(admitted: UserMessage[]): Promise<number> {
    const turn = new Turn(this, this.nextTurn++)
    this.setPhase({ kind: 'running', turn })
    const outcome = turn.finish(await turn.run(admitted))
    // Closed before `turn/end` is written: from here a steer waits for the next batch and a cancel finds no turn.
    this.setPhase({ kind: 'between' })
    turn.end(outcome)
    return turn.number
  }

  private async flushAfter(turn: number) {
    try {
      await this.host.sessions.flush(this.session)
    } catch (cause) {
      dispatchIsolated(this.host.ctx, 'agent/error', this, turn, { code: 'FLUSH_FAILED', message: `session flush failed: ${describeError(cause)}`, cause })
    }
  }

  /** End of a drive: report idle, then wake again if a listener queued work, else release `whenIdle` waiters. */
  private settle() {
    this.setPhase({ kind: 'idle' })
    // Work left by a failed drive is not stranded (work queued by the idle listeners woke the loop already).
    this.wake()
    if (this.phase.kind === 'idle') for (const resolve of this.idleWaiters.splice(0)) resolve()
  }

  /** The one place the phase changes; `agent/status` is emitted when the status it implies changes. */
  private setPhase(phase: Phase) {
    const before = this.status
    this.phase = phase
    const status = this.status
    if (status !== before) dispatchIsolated(this.host.ctx, 'agent/status', this, status)
  }

  /** Reserves the message's id in this session. */
  private claim(message: UserMessage): UserMessage {
    if (this.knownIds.has(message.id)) {
      throw new AgentLoopError('DUPLICATE_MESSAGE_ID', `message id ${message.id} is already used in session ${this.id}`)
    }
    this.knownIds.add(message.id)
    return message
  }

  private assertUsable(action: string) {
    if (this.disposed) throw new AgentLoopError('AGENT_DISPOSED', `cannot ${action}: agent ${this.id} is disposed`)
  }

  private async teardown() {
    this.disposed = true
    const { phase } = this
    if (phase.kind === 'scheduled') {
      clearImmediate(phase.timer)
      this.setPhase({ kind: 'idle' })
    }
    // A batch under decision stays `input/queued` in the log, so a later resume can restore human input.
    if (phase.kind === 'deciding') phase.decision.abandoned = true
    if (phase.kind === 'running' && !phase.turn.stopped) phase.turn.stop({ kind: 'disposed' })
    if (phase.kind === 'compacting') phase.controller.abort()
    await this.loop
    this.setPhase({ kind: 'idle' })
    this.host.forget(this.id)
    dispatchIsolated(this.host.ctx, 'agent/disposed', this)
    for (const resolve of this.idleWaiters.splice(0)) resolve()
    if (this.settings.ownsSession) {
      try {
        await this.host.sessions.close(this.session)
      } catch (error) {
        this.host.logger.warn('%s: closing the session failed: %s', this.id, describeError(error))
      }
    }
  }
}
