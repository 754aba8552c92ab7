import type { ContentBlock, TurnOutcome, UserMessage } from '@goalkeeper/session'
import type { GoalState } from '@goalkeeper/goal'

export interface GoalRoundSource {
  kind: 'goal'
  goalId: string
  revision: number
  round: number
}

/**
 * The one goal round an agent may have in flight. `phase` follows the message: being sent, waiting
 * in the inbox, inside an admission decision, admitted (its turn may have started).
 */
export interface Reservation {
  id: string
  source: GoalRoundSource
  content: ContentBlock[]
  phase: 'sending' | 'queued' | 'deciding' | 'admitted'
  /** Competing input arrived before admission: drop it at admission, no round used. */
  stale: boolean
  /** Settled by a cancel; the turn's own outcome is then ignored. */
  cancelled: boolean
  /** Already blocked `prompt-rejected`; nothing more to settle. */
  rejected: boolean
  turn?: number
  outcome?: TurnOutcome
  /** Resolves when the round's turn has ended or the reservation is gone (unload waits on it). */
  released: Promise<void>
  release: () => void
}

export function newReservation(id: string, source: GoalRoundSource, content: ContentBlock[]): Reservation {
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  return { id, source, content, phase: 'sending', stale: false, cancelled: false, rejected: false, released, release }
}

function sameSource(a: unknown, b: GoalRoundSource): boolean {
  if (typeof a !== 'object' || a === null) return false
  const s = a as Record<string, unknown>
  return Object.keys(s).length === 4 && s.kind === 'goal' && s.goalId === b.goalId && s.revision === b.revision && s.round === b.round
}

function sameContent(a: unknown, b: ContentBlock[]): boolean {
  if (!Array.isArray(a) || a.length !== b.length) return false
  return a.every((block, i) => typeof block === 'object' && block !== null
    && Object.keys(block).length === 2 && block.type === b[i].type && block.text === b[i].text)
}

/** Identity and content both equal the reservation: this is the driver's own message, unaltered. */
export function isExactly(reservation: Reservation, message: UserMessage): boolean {
  return message.id === reservation.id && sameSource(message.source, reservation.source) && sameContent(message.content, reservation.content)
}

/** Why the live goal is no longer the one the round was reserved for (same id and revision, active, armed). */
export function goalMoved(goal: GoalState | undefined, source: GoalRoundSource): string | undefined {
  if (!goal) return 'the goal was cleared'
  if (goal.id !== source.goalId) return 'the goal was replaced'
  if (goal.revision !== source.revision) return `the goal moved to revision ${goal.revision}`
  if (goal.phase !== 'active') return `the goal is ${goal.phase}`
  if (goal.activation !== 'armed') return 'the goal is disarmed'
  return undefined
}

/** Why the round is not the legal next round of the live goal, or undefined when it is. */
export function roundMismatch(goal: GoalState | undefined, source: GoalRoundSource): string | undefined {
  const moved = goalMoved(goal, source)
  if (moved || !goal) return moved
  if (goal.roundsStarted + 1 !== source.round) return `round ${source.round} is not the next round (${goal.roundsStarted + 1})`
  if (source.round > goal.maxGoalRounds) return 'the goal is out of rounds'
  return undefined
}

export function isGoalSourced(message: { source?: unknown } | null | undefined): boolean {
  return (message?.source as { kind?: unknown } | undefined)?.kind === 'goal'
}
