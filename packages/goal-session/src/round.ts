import { isDeepStrictEqual } from 'node:util'
import type { Logger } from 'cordis'
import type { MessageInput } from '@goalkeeper/agent-loop'
import type { GoalRef, GoalRound, GoalState } from '@goalkeeper/goal'
import type { ContentBlock, TurnOutcome, UserMessage } from '@goalkeeper/session'
import { cloneData } from '@goalkeeper/kit'

/**
 * Where a goal round is. Its whole life:
 *
 *   sending ─sent─▶ queued ─fence─▶ deciding ─in the decision─▶ admitted ─turn-start─▶ running ─turn-end─▶ ended
 *   sending … admitted ─other input, goal moved, driver unloading─▶ dropped{stale}      uses no round
 *   sending … running, stale, rejected ─agent/cancel-requested─▶ dropped{cancelled}     settled at once
 *   queued … admitted, stale ─refused by a later hook, or altered─▶ dropped{rejected}    settled at once
 *   admitted, running ─human input queued─▶ (same state, preemptedBy) ─turn-end preempted─▶ ended  settled at once
 *
 * The driver lets go of the round at idle after its turn (then `ended` is settled), or when its message
 * leaves the inbox without opening a turn (`input/rejected`, `input/cancelled`).
 */
export type RoundState =
  | { kind: 'sending' }
  | { kind: 'queued' }
  | { kind: 'deciding' }
  /** `preemptedBy`: the human message queued since admission, which the round yields to as its turn opens. */
  | { kind: 'admitted'; preemptedBy?: string }
  /** `preemptedBy`: the human message the round yields to at its next step boundary. */
  | { kind: 'running'; turn: number; preemptedBy?: string }
  | { kind: 'ended'; turn: number; outcome: TurnOutcome }
  | { kind: 'dropped'; why: 'stale' | 'cancelled' | 'rejected'; turn?: number }

/** A node of the life above: a state, with `dropped` told apart by why. */
export type RoundStep = Exclude<RoundState['kind'], 'dropped'> | Extract<RoundState, { kind: 'dropped' }>['why']

/** The arrows of the life above; any other move is a driver bug. Exported for its test. */
export const NEXT: Readonly<Record<RoundStep, readonly RoundStep[]>> = {
  sending: ['queued', 'stale', 'cancelled'],
  queued: ['deciding', 'stale', 'cancelled', 'rejected'],
  deciding: ['admitted', 'stale', 'cancelled', 'rejected'],
  admitted: ['running', 'stale', 'cancelled', 'rejected'],
  running: ['ended', 'cancelled'],
  ended: [],
  stale: ['cancelled', 'rejected'],
  rejected: ['cancelled'],
  cancelled: [],
}

const stepOf = (state: RoundState): RoundStep => (state.kind === 'dropped' ? state.why : state.kind)

const SOURCE_KEYS: ReadonlySet<string> = new Set(['kind', 'goalId', 'revision', 'round'])
const TEXT_KEYS: ReadonlySet<string> = new Set(['type', 'text'])
const ONE_ITEM: ReadonlySet<string> = new Set(['0'])

/**
 * An object of that prototype whose own enumerable keys are exactly `keys`, with no own symbols: with
 * equal values there, `isDeepStrictEqual` could only agree.
 */
function hasExactly(value: unknown, keys: ReadonlySet<string>, prototype: object): boolean {
  if (typeof value !== 'object' || value === null || Object.getPrototypeOf(value) !== prototype) return false
  const own = Object.keys(value)
  return own.length === keys.size && own.every((key) => keys.has(key)) && Object.getOwnPropertySymbols(value).length === 0
}

/** The one goal round an agent may have in flight: what was reserved, and where it is. */
export class Round {
  state: RoundState = { kind: 'sending' }
  /** Resolves when the round has left the agent: its turn ended, or its message is gone (unload waits on it). */
  readonly left: Promise<void>
  readonly leave: () => void
  private readonly content: ContentBlock[]

  constructor(
    readonly id: string,
    readonly identity: GoalRound,
    /** The goal's cap when reserved; same revision, so the same cap while the round is current. */
    readonly max: number,
    prompt: string,
    private readonly agentId: string,
    private readonly logger: Logger,
  ) {
    this.content = [{ type: 'text', text: prompt }]
    let leave!: () => void
    this.left = new Promise<void>((resolve) => (leave = resolve))
    this.leave = leave
  }

  get number(): number {
    return this.identity.round
  }

  get turn(): number | undefined {
    return 'turn' in this.state ? this.state.turn : undefined
  }

  get ref(): GoalRef {
    return { id: this.identity.goalId, revision: this.identity.revision }
  }

  can(step: RoundStep): boolean {
    return NEXT[stepOf(this.state)].includes(step)
  }

  /** Moves the round on, logged at debug level; a move the life above does not allow throws. */
  transition(next: RoundState, because: string): void {
    const from = stepOf(this.state)
    const to = stepOf(next)
    if (!NEXT[from].includes(to)) throw new Error(`goal round ${this.number} cannot go from ${from} to ${to} (${because})`)
    this.logger.debug('goal round %d of agent %s: %s -> %s: %s', this.number, this.agentId, from, to, because)
    this.state = next
  }

  /** The human message the round yields to, once one was queued while it was admitted or running. */
  get preemptedBy(): string | undefined {
    return this.state.kind === 'admitted' || this.state.kind === 'running' ? this.state.preemptedBy : undefined
  }

  /**
   * Records the first human message queued while the round is admitted or running; it stays in its state
   * (not an arrow of the life above), and `running` inherits it from `admitted`. False when the round cannot
   * yield now or already yields to another message.
   */
  yieldTo(messageId: string): boolean {
    const { state } = this
    if ((state.kind !== 'admitted' && state.kind !== 'running') || state.preemptedBy) return false
    this.logger.debug('goal round %d of agent %s: %s yields to human message %s', this.number, this.agentId, state.kind, messageId)
    this.state = { ...state, preemptedBy: messageId }
    return true
  }

  /** What `agent.send` gets: fresh copies, so the caller's objects never are the recorded ones. */
  message(): MessageInput {
    return { id: this.id, content: cloneData(this.content), source: { kind: 'goal', ...this.identity } }
  }

  /** Identity and content both equal the reservation: this is the driver's own message, unaltered. */
  isExactly(message: UserMessage): boolean {
    return message.id === this.id && this.isOwnSource(message.source) && this.isOwnContent(message.content)
  }

  // Asked at the fence and again as the turn opens. The reservation's own shape is compared field by field;
  // anything else (another prototype, other keys, symbols) goes to the deep comparison, which has the last word.
  private isOwnSource(source: unknown): boolean {
    const { goalId, revision, round } = this.identity
    if (hasExactly(source, SOURCE_KEYS, Object.prototype)) {
      const s = source as Record<string, unknown>
      if (s.kind === 'goal' && s.goalId === goalId && s.revision === revision && s.round === round) return true
    }
    return isDeepStrictEqual(source, { kind: 'goal', ...this.identity })
  }

  private isOwnContent(content: unknown): boolean {
    const own = this.content[0] as { type: 'text'; text: string }
    if (this.content.length === 1 && hasExactly(content, ONE_ITEM, Array.prototype)) {
      const block = (content as unknown[])[0] as Record<string, unknown>
      if (hasExactly(block, TEXT_KEYS, Object.prototype) && block.type === 'text' && block.text === own.text) return true
    }
    return isDeepStrictEqual(content, this.content)
  }

  /** Why the live goal is no longer the one the round was reserved for (same id and revision, active, armed). */
  goalMoved(goal: GoalState | undefined): string | undefined {
    if (!goal) return 'the goal was cleared'
    if (goal.id !== this.identity.goalId) return 'the goal was replaced'
    if (goal.revision !== this.identity.revision) return `the goal moved to revision ${goal.revision}`
    if (goal.phase !== 'active') return `the goal is ${goal.phase}`
    if (goal.activation !== 'armed') return 'the goal is disarmed'
    return undefined
  }
}
