// The budget rules on their own, no harness: checking given budgets, adding a call's usage, what counts as
// reached, and the words for amounts. budgets.test.ts runs them through the goal service and its log.
import { describe, expect, it } from 'vitest'
import { addUsage, budgetReached, budgetsReached, describeBudget, formatBudgetUsd, formatDuration, normalizeBudgets } from '../src/index.ts'

const refusal = (value: unknown) => {
  try {
    normalizeBudgets(value)
  } catch (error) {
    return { code: (error as { code?: string }).code, message: (error as Error).message }
  }
  throw new Error(`${JSON.stringify(value)} was accepted`)
}

describe('normalizeBudgets', () => {
  it('keeps only the keys given, in a fresh object, and nothing for none', () => {
    const given = { tokens: 1000, costUsd: 0.5 }
    const budgets = normalizeBudgets(given)
    expect(budgets).toEqual({ tokens: 1000, costUsd: 0.5 })
    expect(budgets).not.toBe(given)
    expect(normalizeBudgets(undefined)).toBeUndefined()
    expect(normalizeBudgets({})).toBeUndefined()
    expect(normalizeBudgets({ tokens: undefined })).toBeUndefined()
    expect(normalizeBudgets({ activeTimeMs: 60_000 })).toEqual({ activeTimeMs: 60_000 })
  })

  it('refuses anything else with GOAL_INVALID_BUDGET and a message that says what to change', () => {
    const refusals = {
      'not an object': refusal(5),
      'an array': refusal([1000]),
      'null': refusal(null),
      'unknown keys': refusal({ tokens: 1, dollars: 2, minutes: 3 }),
      'zero tokens': refusal({ tokens: 0 }),
      'fractional tokens': refusal({ tokens: 1.5 }),
      'fractional time': refusal({ activeTimeMs: 0.5 }),
      'negative cost': refusal({ costUsd: -1 }),
      'infinite cost': refusal({ costUsd: Infinity }),
      'cost as text': refusal({ costUsd: '2.50' }),
      'time as NaN': refusal({ activeTimeMs: Number.NaN }),
    }
    for (const [name, { code }] of Object.entries(refusals)) expect(code, name).toBe('GOAL_INVALID_BUDGET')
    expect(Object.fromEntries(Object.entries(refusals).map(([name, r]) => [name, r.message]))).toMatchSnapshot()
    // A fractional cost is a fine amount of money.
    expect(normalizeBudgets({ costUsd: 0.005 })).toEqual({ costUsd: 0.005 })
  })
})

describe('addUsage', () => {
  it('starts from nothing, adds each call, and counts it', () => {
    const one = addUsage(undefined, { tokens: 100, costUsd: 0.01, activeTimeMs: 2000 })
    expect(one).toEqual({ tokens: 100, costUsd: 0.01, activeTimeMs: 2000, calls: 1 })
    expect(addUsage(one, { tokens: 50, costUsd: 0.02, activeTimeMs: 500 })).toEqual({ tokens: 150, costUsd: 0.03, activeTimeMs: 2500, calls: 2 })
  })

  it('a call of unknown price makes the cost unknown for good', () => {
    const unknown = addUsage(addUsage(undefined, { tokens: 1, costUsd: 0.5, activeTimeMs: 1 }), { tokens: 1, costUsd: null, activeTimeMs: 1 })
    expect(unknown.costUsd).toBeNull()
    expect(addUsage(unknown, { tokens: 1, costUsd: 0.5, activeTimeMs: 1 })).toEqual({ tokens: 3, costUsd: null, activeTimeMs: 3, calls: 3 })
  })

  it('leaves the spend it was given unchanged', () => {
    const before = { tokens: 1, costUsd: 1, activeTimeMs: 1, calls: 1 }
    addUsage(before, { tokens: 1, costUsd: 1, activeTimeMs: 1 })
    expect(before).toEqual({ tokens: 1, costUsd: 1, activeTimeMs: 1, calls: 1 })
  })
})

describe('budgetsReached', () => {
  const spent = { tokens: 1000, costUsd: 2.5, activeTimeMs: 60_000, calls: 4 }

  it('nothing without budgets, and nothing before a limit', () => {
    expect(budgetsReached({ spent })).toEqual([])
    expect(budgetsReached({ budgets: { tokens: 1001, costUsd: 2.51, activeTimeMs: 60_001 }, spent })).toEqual([])
    expect(budgetReached({ budgets: { tokens: 10 } })).toBeUndefined()
  })

  it('a limit is reached when the spend equals it; tokens, cost and time in that order', () => {
    const reached = budgetsReached({ budgets: { activeTimeMs: 60_000, costUsd: 2.5, tokens: 1000 }, spent })
    expect(reached.map(({ budget, limit, used }) => [budget, limit, used])).toEqual([['tokens', 1000, 1000], ['costUsd', 2.5, 2.5], ['activeTimeMs', 60_000, 60_000]])
    expect(budgetReached({ budgets: { activeTimeMs: 60_000, costUsd: 2.5, tokens: 1000 }, spent })?.budget).toBe('tokens')
  })

  it('a cost budget with a spend of unknown price counts as reached, with used null', () => {
    const [reached] = budgetsReached({ budgets: { costUsd: 100 }, spent: { ...spent, costUsd: null } })
    expect(reached).toMatchObject({ budget: 'costUsd', limit: 100, used: null })
  })

  it('the messages, each budget and the unknown price', () => {
    const messages = budgetsReached({ budgets: { tokens: 900, costUsd: 2, activeTimeMs: 30_000 }, spent: { tokens: 1234, costUsd: 2.0449, activeTimeMs: 3_725_000, calls: 9 } }).map((r) => r.message)
    messages.push(budgetsReached({ budgets: { costUsd: 0.005 }, spent: { ...spent, costUsd: null } })[0].message)
    expect(messages).toMatchSnapshot()
  })
})

describe('amounts in words', () => {
  it('formatBudgetUsd: at least the cents, more digits only when given', () => {
    expect([2.5, 2, 0.01, 0.005, 10.125].map(formatBudgetUsd)).toEqual(['$2.50', '$2.00', '$0.01', '$0.005', '$10.125'])
  })

  it('formatDuration: whole units, rounded to the second', () => {
    expect([0, 499, 500, 59_000, 60_000, 61_000, 3_600_000, 3_660_000, 5_399_600].map(formatDuration))
      .toEqual(['0s', '0s', '1s', '59s', '1m', '1m 1s', '1h', '1h 1m', '1h 30m'])
  })

  it('describeBudget: the word for each budget', () => {
    expect((['tokens', 'costUsd', 'activeTimeMs'] as const).map(describeBudget)).toEqual(['token', 'cost', 'time'])
  })
})
