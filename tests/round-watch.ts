// The round driver's invariants of DESIGN.md section 9, watched from outside through events only, for the
// randomized interleaving tests: at most one reservation at a time, a goal round admitted only as the next
// round of the live goal while it is active and armed, and no forged goal message ever admitted.
import { expect } from 'vitest'
import type { Context } from 'cordis'
import type { Agent } from '@goalkeeper/agent-loop'
import type { GoalState } from '@goalkeeper/goal'
import type { SessionRecord, UserMessage } from '@goalkeeper/session'

export const isGoal = (m: UserMessage | undefined) => m?.source?.kind === 'goal'

export interface RoundWatch {
  /** Every broken invariant, described; a run must end with none. */
  readonly violations: string[]
  /** The most reservations outstanding at once (at most 1). */
  readonly maxOutstanding: number
}

/**
 * `agent` returns the live agent (a test may reopen it); `forging` tells, while a goal-sourced message is
 * queued, whether the test itself is sending it as a forgery.
 */
export function watchRounds(root: Context, agent: () => Agent, forging: () => boolean = () => false): RoundWatch {
  const violations: string[] = []
  const forgedIds = new Set<string>()
  const outstanding = new Set<string>()
  const roundTurns = new Map<number, string>()
  let maxOutstanding = 0
  root.on('agent/queued', (_a: Agent, message: UserMessage) => {
    if (!isGoal(message)) return
    if (forging()) return void forgedIds.add(message.id)
    outstanding.add(message.id)
    maxOutstanding = Math.max(maxOutstanding, outstanding.size)
    if (outstanding.size > 1) violations.push(`two reservations at once: ${[...outstanding].join(', ')}`)
  })
  root.on('agent/turn-start', (_a: Agent, turn: number, messages: UserMessage[]) => {
    for (const m of messages) if (outstanding.has(m.id)) roundTurns.set(turn, m.id)
  })
  root.on('agent/turn-end', (_a: Agent, turn: number) => {
    const roundId = roundTurns.get(turn)
    if (roundId) outstanding.delete(roundId)
  })
  root.on('session/event', (_s, record: SessionRecord) => {
    if (record.type === 'input/rejected' || record.type === 'input/cancelled') {
      outstanding.delete((record.data as { messageId: string }).messageId)
    }
    if (record.type !== 'user/message' || !isGoal(record.data as UserMessage)) return
    const message = record.data as UserMessage
    const source = message.source as { goalId: string; round: number }
    if (forgedIds.has(message.id)) violations.push(`forged message ${message.id} was admitted`)
    let goal: GoalState | undefined
    try {
      goal = root.goals.get(agent())
    } catch (error) {
      violations.push(`goal state unreadable at admission: ${(error as Error).message}`)
      return
    }
    if (!goal || goal.phase !== 'active' || goal.activation !== 'armed') {
      violations.push(`round ${source.round} admitted while the goal was ${goal ? `${goal.phase}/${goal.activation}` : 'absent'}`)
    } else if (goal.id !== source.goalId || goal.roundsStarted !== source.round || source.round > goal.maxGoalRounds) {
      violations.push(`round ${source.round} of ${source.goalId} admitted against ${goal.id} at ${goal.roundsStarted}/${goal.maxGoalRounds}`)
    }
  })
  return { violations, get maxOutstanding() { return maxOutstanding } }
}

/**
 * The end of a run: no violation, no driver listener that failed (the round's life is a closed set of
 * moves), never two reservations, and the goal counts exactly the rounds of it that were admitted.
 */
export function expectRoundsHeld(watch: RoundWatch, errors: readonly string[], goal: GoalState | undefined, records: readonly SessionRecord[]): void {
  expect(watch.violations).toEqual([])
  expect(errors.filter((line) => / failed for agent /.test(line))).toEqual([])
  expect(watch.maxOutstanding).toBeLessThanOrEqual(1)
  if (!goal) return
  const admitted = records.filter((r) => r.type === 'user/message' && isGoal(r.data as UserMessage)
    && ((r.data as UserMessage).source as { goalId: string }).goalId === goal.id)
  expect(goal.roundsStarted).toBe(admitted.length)
}
