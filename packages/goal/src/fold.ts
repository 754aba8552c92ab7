import { describeError, isRecord } from '@goalkeeper/kit'
import { checkpointPart, isRecordOf, type SessionRecord } from '@goalkeeper/session'
import { addUsage, GOAL_USAGE_RECORD, normalizeBudgets } from './budgets.ts'
import { addCheck, checkViolation, GOAL_CHECK_RECORD, normalizeVerify } from './checks.ts'
import { GoalError } from './errors.ts'
import { addJudgement, GOAL_JUDGEMENT_RECORD, judgementViolation } from './judgements.ts'
import { roundViolation } from './rounds.ts'
import { checkClear, transition, type MutatingOperation } from './transitions.ts'
import type { Goal, GoalCheckRecord, GoalJudgementRecord, GoalOperation, GoalUsage } from './types.ts'

export const GOAL_CHANGE_RECORD = 'goal/change'

const OPERATIONS: readonly GoalOperation[] = ['create', 'edit', 'pause', 'resume', 'complete', 'block', 'clear']
const GOAL_KEYS = ['createdAt', 'id', 'maxGoalRounds', 'objective', 'phase', 'revision', 'roundsStarted', 'updatedAt']

/**
 * Incremental, strict fold of a session log into its current goal. The first malformed or
 * illegal record poisons the fold: from then on `current` throws the same error, naming that
 * record's seq, so a damaged log is never half-trusted.
 */
/** What a checkpoint holds of the goal fold: the goal (its spend too), every goal id used, the time floor; or its failure. */
export interface GoalFoldPart {
  goal?: Goal
  usedIds: string[]
  lastAt: number
  failure?: { message: string; seq?: number }
}

export class GoalFold {
  private goal: Goal | undefined
  private readonly usedIds = new Set<string>()
  private lastAt = 0
  private failure: GoalError | undefined
  /** Seq of the next record to fold; undefined before the first. */
  private next?: number

  /** The folded goal; throws `GOAL_CORRUPT_LOG` if any record so far was bad. */
  get current(): Goal | undefined {
    if (this.failure) throw this.failure
    return this.goal
  }

  get error(): GoalError | undefined {
    return this.failure
  }

  /** Earliest time the next mutation may carry, so timestamps never go backwards. */
  get floor(): number {
    return this.lastAt
  }

  /**
   * Folds every record not seen yet; `records` are a session's in order without gaps, from its first or
   * from a checkpoint (`Session.records`).
   */
  catchUp(records: readonly SessionRecord[]): void {
    const first = records[0]?.seq ?? 0
    // A live session let go of records not folded yet: the fold starts again from the checkpoint they preceded.
    if (this.next !== undefined && this.next < first) this.restart()
    for (let index = (this.next ?? first) - first; index < records.length; index++) this.add(records[index])
  }

  /** The fold as a checkpoint keeps it. */
  part(): GoalFoldPart {
    const { failure } = this
    return {
      ...(this.goal && { goal: this.goal }),
      usedIds: [...this.usedIds],
      lastAt: this.lastAt,
      ...(failure && { failure: { message: failure.message, ...(failure.seq !== undefined && { seq: failure.seq }) } }),
    }
  }

  /**
   * Folds the next record of the session (the one after the last folded). A fold that starts at a
   * checkpoint (a session opened from its tail) starts from the state the checkpoint holds.
   */
  add(record: SessionRecord): void {
    const expected = this.next
    this.next = record.seq + 1
    // A fork that starts at its parent's checkpoint: its header is followed by that checkpoint, seqs jumping to it.
    if (expected !== undefined && record.seq > expected) {
      this.goal = undefined
      this.usedIds.clear()
      this.lastAt = 0
      this.failure = undefined
      return this.restore(record)
    }
    if (expected === undefined && record.seq > 0) return this.restore(record)
    if (this.failure) return
    try {
      this.apply(record)
    } catch (error) {
      this.failure = corrupt(record, error)
    }
  }

  private restart(): void {
    this.goal = undefined
    this.usedIds.clear()
    this.lastAt = 0
    this.failure = undefined
    this.next = undefined
  }

  private restore(record: SessionRecord): void {
    const part = checkpointPart<GoalFoldPart>(record, 'goal')
    if (!part) {
      // Without it nothing before this record is known: refusing is the only safe answer.
      this.failure = corrupt(record, new Error('the fold starts after the first record, and not at a checkpoint holding the goal'))
      return
    }
    this.goal = part.goal
    for (const id of part.usedIds) this.usedIds.add(id)
    this.lastAt = part.lastAt
    if (part.failure) this.failure = new GoalError('GOAL_CORRUPT_LOG', part.failure.message, part.failure.seq)
  }

  private apply(record: SessionRecord): void {
    if (record.type === GOAL_CHANGE_RECORD) return this.applyChange(record.data)
    if (record.type === GOAL_USAGE_RECORD) return this.applyUsage(record.data)
    if (record.type === GOAL_CHECK_RECORD) return this.applyCheck(record.data)
    if (record.type === GOAL_JUDGEMENT_RECORD) return this.applyJudgement(record.data)
    if (!isRecordOf(record, 'user/message')) return
    // Strict about the log as it is: the data need not be what the vocabulary says.
    const source: unknown = isRecord(record.data) ? record.data.source : undefined
    if (!isRecord(source) || source.kind !== 'goal') return
    const violation = roundViolation(this.goal, source)
    if (violation) throw new Error(`illegal goal round: ${violation}`)
    // roundViolation checked the shape: `round` is the next round's number.
    this.goal = { ...this.goal!, roundsStarted: source.round as number }
  }

  private applyChange(data: unknown): void {
    if (!isRecord(data)) throw new Error('the record data is not an object')
    const op = data.op as GoalOperation
    if (!OPERATIONS.includes(op)) throw new Error(`unknown goal operation ${JSON.stringify(data.op)}`)
    if (op === 'clear') return this.applyClear(data)
    exactKeys(data, ['goal', 'op'], 'record data')
    const next = data.goal
    checkGoalShape(next)
    if (next.updatedAt < this.lastAt) throw new Error(`updatedAt ${next.updatedAt} goes back before ${this.lastAt}`)
    if (op === 'create' && this.usedIds.has(next.id)) throw new Error(`goal id ${next.id} was already used in this session`)
    const expected = transition(this.goal, op as MutatingOperation, {
      now: next.updatedAt,
      id: next.id,
      objective: next.objective,
      maxGoalRounds: next.maxGoalRounds,
      reason: next.blockedReason,
      budgets: next.budgets,
      verify: op === 'edit' ? next.verify ?? [] : next.verify,
      until: op === 'create' ? next.until : undefined,
      completedBy: op === 'complete' ? next.completedBy : undefined,
    })
    const difference = differ(expected, next)
    if (difference) throw new Error(`the ${op} snapshot ${difference}`)
    this.goal = expected
    this.usedIds.add(expected.id)
    this.lastAt = expected.updatedAt
  }

  private applyUsage(data: unknown): void {
    const violation = usageViolation(this.goal, data)
    if (violation) throw new Error(violation)
    this.goal = { ...this.goal!, spent: addUsage(this.goal!.spent, data as GoalUsage) }
  }

  private applyCheck(data: unknown): void {
    const violation = checkViolation(this.goal, data)
    if (violation) throw new Error(violation)
    this.goal = { ...this.goal!, verification: addCheck(this.goal!.verification, data as GoalCheckRecord) }
  }

  private applyJudgement(data: unknown): void {
    const violation = judgementViolation(this.goal, data)
    if (violation) throw new Error(violation)
    this.goal = { ...this.goal!, judgement: addJudgement(this.goal!.judgement, data as GoalJudgementRecord) }
  }

  private applyClear(data: Record<string, unknown>): void {
    exactKeys(data, ['cleared', 'goal', 'op'], 'clear record data')
    if (data.goal !== null) throw new Error('a clear record must have goal: null')
    const prev = checkClear(this.goal)
    const cleared = data.cleared
    if (!isRecord(cleared)) throw new Error('a clear record must name the cleared goal as { id, revision }')
    exactKeys(cleared, ['id', 'revision'], 'cleared')
    if (cleared.id !== prev.id || cleared.revision !== prev.revision) {
      throw new Error(`it clears ${JSON.stringify(cleared)} but the current goal is ${JSON.stringify({ id: prev.id, revision: prev.revision })}`)
    }
    this.goal = undefined
  }
}

/** Folds a whole log (for example one read from a file) and returns its current goal, or throws `GOAL_CORRUPT_LOG`. */
export function foldGoal(records: readonly SessionRecord[]): Goal | undefined {
  const fold = new GoalFold()
  fold.catchUp(records)
  return fold.current
}

function corrupt(record: SessionRecord, error: unknown): GoalError {
  const seq = (record as { seq?: unknown })?.seq
  const type = (record as { type?: unknown })?.type
  const detail = describeError(error).replace(/\.$/, '')
  return new GoalError(
    'GOAL_CORRUPT_LOG',
    `The goal log is corrupt at record seq ${String(seq)} (${String(type)}): ${detail}. The goal state of this session cannot be trusted; fork the session before seq ${String(seq)} to continue from a good state.`,
    typeof seq === 'number' ? seq : undefined,
  )
}

const USAGE_KEYS = ['activeTimeMs', 'costUsd', 'goalId', 'round', 'step', 'tokens', 'turn']
const SPENT_KEYS = ['activeTimeMs', 'calls', 'costUsd', 'tokens']

/**
 * Why `data` is not a legal `goal/usage` record for `goal`, or undefined: the shape, and that it counts a
 * call of the goal's current round. Shared by the fold and `recordUsage`, which refuses before writing.
 */
export function usageViolation(goal: Goal | undefined, data: unknown): string | undefined {
  if (!isRecord(data)) return 'the usage record data is not an object'
  try {
    exactKeys(data, USAGE_KEYS, 'usage record data')
  } catch (error) {
    return describeError(error)
  }
  if (typeof data.goalId !== 'string' || !data.goalId) return 'the usage goalId is not a non-empty string'
  for (const key of ['round', 'turn', 'step', 'tokens', 'activeTimeMs']) {
    if (!isCount(data[key])) return `usage ${key} ${JSON.stringify(data[key])} is not a non-negative integer`
  }
  if (data.costUsd !== null && !isAmount(data.costUsd)) return `usage costUsd ${JSON.stringify(data.costUsd)} is neither null nor a non-negative number`
  if (!goal || goal.id !== data.goalId) return `the usage is for goal ${JSON.stringify(data.goalId)}, which is not the current goal`
  if (data.round !== goal.roundsStarted || goal.roundsStarted < 1) return `the usage is for round ${data.round}, but the current round is ${goal.roundsStarted}`
  return undefined
}

function checkVerification(value: unknown): void {
  if (!isRecord(value)) throw new Error('goal verification is not an object')
  exactKeys(value, ['attempts', 'failures', 'last'], 'verification')
  if (!isCount(value.attempts) || !isCount(value.failures) || value.failures > value.attempts) throw new Error('goal verification counts are not consistent counts')
  if (!isRecord(value.last)) throw new Error('goal verification last is not an object')
  exactKeys(value.last, ['command', 'exitCode', 'ok'], 'verification last')
}

function checkJudgement(value: unknown): void {
  if (!isRecord(value)) throw new Error('goal judgement is not an object')
  exactKeys(value, ['attempts', 'last', 'rejectionsInARow'], 'judgement')
  if (!isCount(value.attempts) || !isCount(value.rejectionsInARow) || value.rejectionsInARow > value.attempts) throw new Error('goal judgement counts are not consistent counts')
  if (!isRecord(value.last)) throw new Error('goal judgement last is not an object')
  exactKeys(value.last, ['accepted', 'diff', 'judge', 'missing', 'reasons', 'verdict'], 'judgement last')
}

const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
const isAmount = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value) && value >= 0

function checkGoalShape(goal: unknown): asserts goal is Goal {
  if (!isRecord(goal)) throw new Error('the goal snapshot is not an object')
  const optional = ['budgets', 'spent', 'verify', 'until', 'verification', 'judgement', ...(goal.phase === 'blocked' ? ['blockedReason'] : []), ...(goal.phase === 'complete' ? ['completedBy'] : [])].filter((key) => key === 'blockedReason' || key in goal)
  exactKeys(goal, [...GOAL_KEYS, ...optional], 'goal snapshot')
  if ('budgets' in goal) normalizeBudgets(goal.budgets)
  if ('verify' in goal && !normalizeVerify(goal.verify)?.length) throw new Error('goal verify is an empty check')
  if ('verification' in goal) checkVerification(goal.verification)
  if ('judgement' in goal) checkJudgement(goal.judgement)
  if ('spent' in goal) {
    const spent = goal.spent
    if (!isRecord(spent)) throw new Error('goal spent is not an object')
    exactKeys(spent, SPENT_KEYS, 'spent')
    if (!isCount(spent.tokens) || !isCount(spent.activeTimeMs) || !isCount(spent.calls) || (spent.costUsd !== null && !isAmount(spent.costUsd))) {
      throw new Error(`goal spent ${JSON.stringify(spent)} has a value that is not a count or an amount`)
    }
  }
  if (typeof goal.id !== 'string' || !goal.id) throw new Error('the goal id is not a non-empty string')
  for (const key of ['revision', 'maxGoalRounds', 'roundsStarted', 'createdAt', 'updatedAt']) {
    const value = goal[key]
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw new Error(`goal ${key} ${JSON.stringify(value)} is not a non-negative integer`)
  }
  if ((goal.createdAt as number) > (goal.updatedAt as number)) throw new Error(`createdAt ${goal.createdAt} is after updatedAt ${goal.updatedAt}`)
  if (goal.phase === 'blocked' && isRecord(goal.blockedReason)) exactKeys(goal.blockedReason, ['code', 'message'], 'blockedReason')
}

/** Names the first field where the recorded snapshot differs from what the transition produces. */
function differ(expected: Goal, actual: Goal): string | undefined {
  for (const key of [...new Set([...Object.keys(expected), ...Object.keys(actual)])] as (keyof Goal)[]) {
    if (canonical(expected[key]) !== canonical(actual[key])) {
      return `has ${key} ${JSON.stringify(actual[key])} where ${JSON.stringify(expected[key])} was expected`
    }
  }
  return undefined
}

function canonical(value: unknown): string {
  if (!isRecord(value)) return JSON.stringify(value)
  return `{${Object.keys(value).sort().map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`).join(',')}}`
}

function exactKeys(value: Record<string, unknown>, keys: readonly string[], what: string): void {
  const found = Object.keys(value).sort()
  if (found.join() !== [...keys].sort().join()) throw new Error(`${what} must have exactly the keys ${[...keys].sort().join(', ')}, found ${found.join(', ')}`)
}
