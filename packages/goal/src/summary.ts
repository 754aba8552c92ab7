import { describeError } from '@goalkeeper/kit'
import type { SummaryFold } from '@goalkeeper/session'
import { GoalFold } from './fold.ts'
import type { Goal } from './types.ts'

/** A session's goal as listing keeps it: the folded goal (null: none), or why the log's goal cannot be trusted. */
export type GoalSummary = { goal: Goal | null } | { error: string }

/**
 * The goal fold for `ctx.sessions.list({ folds: { goal: goalSummaryFold } })`: listing keeps its result in
 * each session's summary, so `goalkeeper sessions` prints phases, rounds and spend without reading logs.
 */
export const goalSummaryFold: SummaryFold<GoalSummary> = {
  // Bump with any change to the fold or the Goal shape: summaries kept by another version are rebuilt.
  version: 'goal-1',
  start() {
    const fold = new GoalFold()
    return {
      add: (record) => fold.add(record),
      result: () => (fold.error ? { error: describeError(fold.error) } : { goal: fold.current ?? null }),
    }
  },
}
