import { dispatchIsolated } from '@goalkeeper/session'
import type { Session, TurnOutcome, UserMessage } from '@goalkeeper/session'
import type { Agent, AgentStatus, CancelReason, MessageInput } from './types.ts'
import type { AgentSettings, LoopHost, PendingDecision, TurnState } from './state.ts'
import type { SessionFold } from './fold.ts'
import { AgentLoopError, describe } from './errors.ts'
import { HUMAN, STEER, toUserMessage } from './message.ts'
import { History } from './history.ts'
import { admitBatch, lastWord, reject, rejectCancelled } from './admission.ts'
import { runTurn } from './turn.ts'

const CANCEL_REASONS: readonly CancelReason[] = ['user', 'parent', 'shutdown', 'policy']
const nextMacrotask = () => new Promise<void>((resolve) => setImmediate(resolve))

export class LoopAgent implements Agent {
  status: AgentStatus = 'idle'
  disposed = false
  readonly history: History
  private inbox: UserMessage[]
  private current?: TurnState
  private pending?: PendingDecision
  private nextTurn: number
  private knownIds: Set<string>
  private scheduled?: NodeJS.Immediate
  private driving = false
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
  get turn() { return this.current?.turn }

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
    const state = this.current
    if (!state) return this.send(candidate)
    const message = this.claim(candidate)
    state.steered.push(message)
    return message
  }

  /** Takes the inbox as a batch in a later macrotask; needed for inputs restored by `resume`, which do not wake. */
  wake(): boolean {
    if (this.disposed || !this.inbox.length) return false
    if (this.driving || this.scheduled) return true
    this.scheduled = setImmediate(() => {
      this.scheduled = undefined
      this.driving = true
      this.loop = this.drive()
    })
    return true
  }

  cancel(reason: CancelReason, options: { turn?: number } = {}): boolean {
    if (!CANCEL_REASONS.includes(reason)) {
      throw new AgentLoopError('INVALID_CANCEL_REASON', `cancel reason must be one of ${CANCEL_REASONS.join(', ')}, got ${JSON.stringify(reason)}`)
    }
    if (this.disposed) return false
    const open = this.current && !this.current.stop ? this.current : undefined
    if (options.turn !== undefined) {
      // A targeted cancel (policy plugins) stops only that turn and keeps the inbox.
      if (!open || open.turn !== options.turn) return false
      dispatchIsolated(this.host.ctx, 'agent/cancel-requested', this, reason)
      this.stopTurn(open, { kind: 'aborted', cause: reason })
      return true
    }
    // Only inputs queued now are removed: work a listener queues in response survives.
    const queued = this.inbox.slice()
    const pending = this.pending && !this.pending.void && this.pending.batch.length ? this.pending : undefined
    if (!queued.length && !pending && !open) return false
    dispatchIsolated(this.host.ctx, 'agent/cancel-requested', this, reason)
    for (const message of queued) {
      const index = this.inbox.indexOf(message)
      if (index < 0) continue
      this.inbox.splice(index, 1)
      this.session.append('input/cancelled', { messageId: message.id, reason })
    }
    if (pending && !pending.void) {
      pending.void = true
      for (const message of pending.batch) reject(this, message, rejectCancelled(reason))
    }
    if (open && !open.stop) this.stopTurn(open, { kind: 'aborted', cause: reason })
    return true
  }

  whenIdle(): Promise<void> {
    if (this.isQuiet()) return Promise.resolve()
    return new Promise((resolve) => this.idleWaiters.push(resolve))
  }

  dispose(): Promise<void> {
    return this.disposing ??= this.teardown()
  }

  // Loop internals, used by admission.ts and turn.ts.

  openTurn(): TurnState {
    return this.current = { turn: this.nextTurn++, controller: new AbortController(), sources: [], steered: [] }
  }

  closeTurn(state: TurnState) {
    if (this.current === state) this.current = undefined
  }

  recordUserMessage(state: TurnState, message: UserMessage) {
    this.session.append('user/message', message)
    state.sources.push(message.source)
  }

  private stopTurn(state: TurnState, outcome: TurnOutcome) {
    state.stop = outcome
    state.controller.abort(new AgentLoopError('ABORTED', `turn ${state.turn} ${outcome.kind === 'disposed' ? 'disposed' : 'cancelled'}`))
  }

  private async drive() {
    try {
      while (this.inbox.length && !this.disposed) {
        // Taken before `agent/status` is emitted, so a listener's cancel finds it under decision.
        const pending = this.pending = { batch: this.inbox.splice(0), void: false }
        this.setStatus('running')
        await admitBatch(this, pending)
        // The batch stays under decision until `runTurn` opens its turn, synchronously, right after this.
        const admitted = pending.void ? [] : lastWord(this, pending)
        this.pending = undefined
        if (admitted.length) await this.flushAfter(await runTurn(this, admitted))
        // Inputs queued meanwhile form the next batch, taken in a later macrotask like the first one.
        if (this.inbox.length && !this.disposed) await nextMacrotask()
      }
    } catch (error) {
      this.host.logger.error('%s: agent loop failed: %s', this.id, (error as Error)?.stack ?? error)
      dispatchIsolated(this.host.ctx, 'agent/error', this, this.current?.turn, { code: 'INTERNAL', message: describe(error), cause: error })
      this.current = this.pending = undefined
    } finally {
      this.driving = false
      this.settle()
    }
  }

  private async flushAfter(turn: number) {
    try {
      await this.host.sessions.flush(this.session)
    } catch (cause) {
      dispatchIsolated(this.host.ctx, 'agent/error', this, turn, { code: 'FLUSH_FAILED', message: `session flush failed: ${describe(cause)}`, cause })
    }
  }

  /** End of a drive: report idle, then wake again if a listener queued work, else release `whenIdle` waiters. */
  private settle() {
    this.setStatus('idle')
    // Work left by a failed drive is not stranded (work queued by the idle listeners woke the loop already).
    this.wake()
    if (this.isQuiet()) for (const resolve of this.idleWaiters.splice(0)) resolve()
  }

  private isQuiet() {
    return !this.driving && !this.scheduled
  }

  private setStatus(status: AgentStatus) {
    if (this.status === status) return
    this.status = status
    dispatchIsolated(this.host.ctx, 'agent/status', this, status)
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
    if (this.scheduled) {
      clearImmediate(this.scheduled)
      this.scheduled = undefined
    }
    // A batch under decision stays `input/queued` in the log, so a later resume can restore human input.
    if (this.pending) this.pending.void = true
    if (this.current && !this.current.stop) this.stopTurn(this.current, { kind: 'disposed' })
    await this.loop
    this.setStatus('idle')
    this.host.forget(this.id)
    dispatchIsolated(this.host.ctx, 'agent/disposed', this)
    for (const resolve of this.idleWaiters.splice(0)) resolve()
    if (this.settings.ownsSession) {
      try {
        await this.host.sessions.close(this.session)
      } catch (error) {
        this.host.logger.warn('%s: closing the session failed: %s', this.id, describe(error))
      }
    }
  }
}
