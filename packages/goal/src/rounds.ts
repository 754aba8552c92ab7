import { isRecordOf, recordsOfTurn, type SessionRecord } from '@goalkeeper/session'
import type { Goal, GoalRound } from './types.ts'

const SOURCE_KEYS = ['goalId', 'kind', 'revision', 'round']

/** Whether a message says it is a goal round; whether it is a legal one is `roundViolation`'s question. */
export function isGoalSourced<M extends { source?: unknown }>(message: M | null | undefined): message is M & { source: GoalRound & { kind: 'goal' } } {
  return (message?.source as { kind?: unknown } | undefined)?.kind === 'goal'
}

/**
 * The round `turn` was: the source of the goal-sourced message admitted in it. Only that turn's own
 * records count, from its `turn/start` to its `turn/end`, so a later round never answers for it.
 */
export function roundOfTurn(records: readonly SessionRecord[], turn: number): GoalRound | undefined {
  for (const record of recordsOfTurn(records, turn)) {
    if (!isRecordOf(record, 'user/message') || !isGoalSourced(record.data)) continue
    const { goalId, revision, round } = record.data.source
    return { goalId, revision, round }
  }
  return undefined
}

/**
 * Why a goal-sourced message is not the legal next round of `goal`, or undefined when it is: the one
 * answer to "is this goal round legal". Admission (which drops and vetoes) and the fold (which fails
 * loudly) share it; the round driver does not judge legality, only whether a message is its own round.
 */
export function roundViolation(goal: Goal | undefined, source: unknown): string | undefined {
  const shapeProblem = checkSourceShape(source)
  if (shapeProblem) return shapeProblem
  const { goalId, revision, round } = source as GoalRound
  if (!goal) return `it is a round of goal ${goalId} but the session has no goal`
  if (goalId !== goal.id) return `it is a round of goal ${goalId} but the current goal is ${goal.id}`
  if (revision !== goal.revision) return `it names revision ${revision} but the goal is at revision ${goal.revision}`
  if (goal.phase !== 'active') return `the goal is ${goal.phase}, not active`
  if (round !== goal.roundsStarted + 1) return `it is round ${round} but the next round is ${goal.roundsStarted + 1}`
  if (round > goal.maxGoalRounds) return `round ${round} is beyond the goal's maximum of ${goal.maxGoalRounds} rounds`
  return undefined
}

function checkSourceShape(source: unknown): string | undefined {
  if (typeof source !== 'object' || source === null) return 'its goal source is not an object'
  const keys = Object.keys(source).sort()
  if (keys.join() !== SOURCE_KEYS.join()) return `its goal source must have exactly the keys ${SOURCE_KEYS.join(', ')}, found ${keys.join(', ')}`
  const { goalId, revision, round } = source as Record<string, unknown>
  if (typeof goalId !== 'string' || !goalId) return 'its goal source has no goal id'
  if (!isPositiveInteger(revision)) return `its goal source revision ${JSON.stringify(revision)} is not a positive integer`
  if (!isPositiveInteger(round)) return `its goal source round ${JSON.stringify(round)} is not a positive integer`
  return undefined
}

function isPositiveInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 1
}
