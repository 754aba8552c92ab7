import { describeBudget, type BudgetReached } from '@goalkeeper/goal'

/** The one instruction the model gets when a budget runs out in the middle of a round. */
export function wrapUpMessage(reached: BudgetReached): string {
  return `The goal's ${describeBudget(reached.budget)} budget is used up (${reached.spent}), so the goal is now blocked and no further round will run. `
    + 'Stop calling tools. Reply with a short summary: what is done, how it was verified, and what is left to do.'
}
