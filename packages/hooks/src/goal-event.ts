import { BUDGET_BLOCK_CODE, type GoalChange } from '@goalkeeper/goal'

/** A goal change in the words a goal-changed hook matches on. */
export type GoalEvent = 'created' | 'edited' | 'paused' | 'resumed' | 'completed' | 'blocked' | 'budget-reached' | 'cleared'

const BY_OPERATION = { create: 'created', edit: 'edited', pause: 'paused', resume: 'resumed', complete: 'completed', block: 'blocked', clear: 'cleared' } as const

export function goalEventOf(change: Pick<GoalChange, 'op' | 'goal'>): GoalEvent {
  if (change.op === 'block' && change.goal?.blockedReason?.code === BUDGET_BLOCK_CODE) return 'budget-reached'
  return BY_OPERATION[change.op] ?? change.op
}
