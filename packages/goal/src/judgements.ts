import { isRecord } from '@goalkeeper/kit'
import type { Goal, GoalJudgement, GoalJudgementRecord, JudgeVerdict } from './types.ts'

export const GOAL_JUDGEMENT_RECORD = 'goal/judgement'

export const JUDGE_VERDICTS: readonly JudgeVerdict[] = ['met', 'not-met', 'cannot-tell']
/** Reasons and missing items kept with a judgement: enough for the next round, small enough for every attempt. */
export const MAX_JUDGEMENT_ITEMS = 10
export const MAX_JUDGEMENT_TEXT = 1000

const KEYS = ['accepted', 'diff', 'goalId', 'judge', 'missing', 'reasons', 'verdict']
/** The diff summary kept with a judgement (a `git diff --stat`); the hash names the whole patch. */
export const MAX_DIFF_SUMMARY = 2000

const isText = (value: unknown, max: number): value is string => typeof value === 'string' && value.length > 0 && value.length <= max
const isTextList = (value: unknown): value is string[] =>
  Array.isArray(value) && value.length <= MAX_JUDGEMENT_ITEMS && value.every((item) => isText(item, MAX_JUDGEMENT_TEXT))

/** Why `data` is not a legal `goal/judgement` record for `goal`, or undefined. Shared by the fold and `recordJudgement`. */
export function judgementViolation(goal: Goal | undefined, data: unknown): string | undefined {
  if (!isRecord(data)) return 'the judgement record data is not an object'
  const keys = Object.keys(data).sort().join()
  if (keys !== KEYS.join()) return `judgement record data must have exactly the keys ${KEYS.join(', ')}, found ${keys}`
  if (!isText(data.goalId, 200)) return 'the judgement goalId is not a non-empty string'
  if (!isText(data.judge, 200)) return 'the judgement judge is not a non-empty string'
  if (!JUDGE_VERDICTS.includes(data.verdict as JudgeVerdict)) return `the judgement verdict ${JSON.stringify(data.verdict)} is not one of ${JUDGE_VERDICTS.join(', ')}`
  if (typeof data.accepted !== 'boolean') return 'the judgement accepted is not a boolean'
  if (data.accepted && data.verdict === 'not-met') return 'a "not-met" judgement cannot be accepted'
  if (!isTextList(data.reasons) || !isTextList(data.missing)) return `the judgement reasons and missing are lists of at most ${MAX_JUDGEMENT_ITEMS} texts of at most ${MAX_JUDGEMENT_TEXT} characters`
  if (data.diff !== null) {
    const diff = data.diff
    if (!isRecord(diff) || Object.keys(diff).sort().join() !== 'sha256,summary') return 'the judgement diff is neither null nor { summary, sha256 }'
    if (typeof diff.summary !== 'string' || diff.summary.length > MAX_DIFF_SUMMARY) return `the judgement diff summary is not text of at most ${MAX_DIFF_SUMMARY} characters`
    if (typeof diff.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(diff.sha256)) return 'the judgement diff sha256 is not a SHA-256 in hex'
  }
  if (!goal || goal.id !== data.goalId) return `the judgement is for goal ${JSON.stringify(data.goalId)}, which is not the current goal`
  if (goal.phase !== 'active') return `the goal is ${goal.phase}, and only an active goal's completion is judged`
  return undefined
}

export function addJudgement(judgement: GoalJudgement | undefined, record: GoalJudgementRecord): GoalJudgement {
  return {
    attempts: (judgement?.attempts ?? 0) + 1,
    rejectionsInARow: record.accepted ? 0 : (judgement?.rejectionsInARow ?? 0) + 1,
    last: { judge: record.judge, verdict: record.verdict, accepted: record.accepted, reasons: [...record.reasons], missing: [...record.missing], diff: record.diff && { ...record.diff } },
  }
}
