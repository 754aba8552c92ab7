// The wrap-up instruction for every budget, as file snapshots: a change of wording is a one-line diff in
// __snapshots__/wrap-up.test.ts.snap. The reached budgets come from the goal package's own rule.
import { describe, expect, it } from 'vitest'
import { budgetsReached } from '@goalkeeper/goal'
import { wrapUpMessage } from '../src/wrap-up.ts'

describe('the budget wrap-up message', () => {
  it('tokens, cost, time, and a cost that cannot be checked', () => {
    const reached = budgetsReached({
      budgets: { tokens: 50_000, costUsd: 2.5, activeTimeMs: 30 * 60_000 },
      spent: { tokens: 51_234, costUsd: 2.61, activeTimeMs: 31 * 60_000 + 5_000, calls: 12 },
    })
    expect(reached.map((r) => r.budget)).toEqual(['tokens', 'costUsd', 'activeTimeMs'])
    for (const r of reached) expect(wrapUpMessage(r)).toMatchSnapshot(r.budget)
    const [unknown] = budgetsReached({ budgets: { costUsd: 1 }, spent: { tokens: 10, costUsd: null, activeTimeMs: 1, calls: 1 } })
    expect(wrapUpMessage(unknown)).toMatchSnapshot('cost of unknown price')
  })
})
