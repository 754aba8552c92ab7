import { afterEach, describe, expect, it } from 'vitest'
import type { Agent } from '@goalkeeper/agent-loop'
import { budgetReached, budgetsReached, foldGoal, formatBudgetUsd, type GoalState } from '../src/index.ts'
import { codeOf, goalHarness, type Harness } from './helpers.ts'

let h: Harness
afterEach(() => h?.dispose())

const ref = (goal: GoalState) => ({ id: goal.id, revision: goal.revision })

async function withRound(budgets: Record<string, number>): Promise<{ agent: Agent; goal: GoalState }> {
  h = await goalHarness()
  const agent = await h.createAgent()
  const goal = h.root.goals.create(agent, { objective: 'Spend wisely', budgets })
  h.scripted.push({ text: 'worked' })
  agent.send({ content: 'round', source: { kind: 'goal', goalId: goal.id, revision: 1, round: 1 } })
  await agent.whenIdle()
  return { agent, goal: h.root.goals.get(agent)! }
}

const call = (goal: GoalState, tokens: number, costUsd: number | null, activeTimeMs = 500) =>
  ({ goalId: goal.id, round: goal.roundsStarted, turn: 1, step: 1, tokens, costUsd, activeTimeMs })

describe('goal budgets', () => {
  it('are set at creation, merged by edit, and the spend folds from goal/usage records, live as on replay', async () => {
    const { agent, goal } = await withRound({ tokens: 1000, costUsd: 0.5 })
    expect(goal.budgets).toEqual({ tokens: 1000, costUsd: 0.5 })
    expect(goal).not.toHaveProperty('spent')
    h.root.goals.recordUsage(agent, call(goal, 300, 0.125))
    const { goal: after, reached } = h.root.goals.recordUsage(agent, call(goal, 200, 0.125, 700))
    expect(reached).toEqual([])
    expect(after.spent).toEqual({ tokens: 500, costUsd: 0.25, activeTimeMs: 1200, calls: 2 })
    expect(after.revision).toBe(1)
    const edited = h.root.goals.edit(agent, ref(after), { budgets: { activeTimeMs: 60_000 } })
    expect(edited).toMatchObject({ budgets: { tokens: 1000, costUsd: 0.5, activeTimeMs: 60_000 }, spent: { tokens: 500 } })
    await h.root.sessions.flush(agent.session)
    const { activation: _, ...persisted } = h.root.goals.get(agent)!
    expect(foldGoal(h.readFile(agent))).toEqual(persisted)
  })

  it('a call of unknown price makes the cost unknown for good, and a cost budget then counts as reached', async () => {
    const { agent, goal } = await withRound({ costUsd: 5 })
    h.root.goals.recordUsage(agent, call(goal, 10, 0.01))
    h.root.goals.recordUsage(agent, call(goal, 10, null))
    const { goal: spent, reached } = h.root.goals.recordUsage(agent, call(goal, 10, 0.01))
    expect(reached.map((one) => one.budget)).toEqual(['costUsd'])
    expect(spent.spent).toMatchObject({ tokens: 30, costUsd: null, calls: 3 })
    expect(budgetReached(spent)).toMatchObject({ budget: 'costUsd', used: null, message: expect.stringMatching(/no known price/) })
  })

  it('resume is refused while a budget is used up; raising it lets the goal resume', async () => {
    const { agent, goal } = await withRound({ tokens: 100 })
    h.root.goals.recordUsage(agent, call(goal, 150, 0))
    const blocked = h.root.goals.block(agent, ref(goal), { code: 'budget-limited', message: 'tokens' })
    expect(codeOf(() => h.root.goals.resume(agent, ref(blocked)))).toBe('GOAL_BUDGET_LIMIT')
    const raised = h.root.goals.edit(agent, ref(blocked), { budgets: { tokens: 400 } })
    expect(h.root.goals.resume(agent, ref(raised))).toMatchObject({ phase: 'active', activation: 'armed', budgets: { tokens: 400 }, spent: { tokens: 150 } })
  })

  it('two budgets used up at once are both named: by budgetsReached and by the refused resume', async () => {
    const { agent, goal } = await withRound({ tokens: 100, costUsd: 0.004, activeTimeMs: 60_000 })
    h.root.goals.recordUsage(agent, call(goal, 150, 0.005))
    const blocked = h.root.goals.block(agent, ref(goal), { code: 'budget-limited', message: 'tokens' })
    expect(budgetsReached(blocked).map((one) => [one.budget, one.used])).toEqual([['tokens', 150], ['costUsd', 0.005]])
    expect(budgetsReached(blocked)[1].message).toBe('The cost budget is used up: $0.0050 of $0.004.')
    expect(() => h.root.goals.resume(agent, ref(blocked))).toThrow(/tokens\. The cost budget .* Raise the token and cost budgets with an edit/)
    const halfRaised = h.root.goals.edit(agent, ref(blocked), { budgets: { tokens: 400 } })
    expect(codeOf(() => h.root.goals.resume(agent, ref(halfRaised)))).toBe('GOAL_BUDGET_LIMIT')
    const raised = h.root.goals.edit(agent, ref(halfRaised), { budgets: { costUsd: 0.01 } })
    expect(h.root.goals.resume(agent, ref(raised)).phase).toBe('active')
  })

  it('counts a step by its turn, reports what was reached, and with a stop blocks the round at its budget in the same call', async () => {
    const { agent, goal } = await withRound({ tokens: 100, activeTimeMs: 60_000 })
    const step = { turn: 1, step: 1, tokens: 60, costUsd: 0, activeTimeMs: 500 }
    // A turn that was not a round of the live goal counts nothing.
    expect(h.root.goals.recordUsage(agent, { ...step, turn: 7 }, { by: 'goal-budget' })).toBeUndefined()
    expect(h.root.goals.recordUsage(agent, step, { by: 'goal-budget' })).toMatchObject({ goal: { phase: 'active', spent: { tokens: 60 } }, reached: [], stopped: false })
    // Without a stop a budget used up is only reported.
    const counted = h.root.goals.recordUsage(agent, step)!
    expect(counted).toMatchObject({ goal: { phase: 'active', spent: { tokens: 120 } }, stopped: false })
    expect(counted.reached).toEqual([{ budget: 'tokens', limit: 100, used: 120, spent: '120 of 100 tokens', message: 'The token budget is used up: 120 of 100 tokens.' }])
    const stopped = h.root.goals.recordUsage(agent, step, { by: 'goal-budget' })!
    expect(stopped).toMatchObject({ stopped: true, goal: { phase: 'blocked', blockedReason: { code: 'budget-limited', message: 'The token budget is used up: 180 of 100 tokens.' } } })
    expect(h.root.goals.get(agent)).toMatchObject({ phase: 'blocked', revision: goal.revision + 1 })
  })

  it('formats a dollar budget as given, with at least the cents', () => {
    expect([2.5, 2, 0.01, 0.004, 0.125, 10].map(formatBudgetUsd)).toEqual(['$2.50', '$2.00', '$0.01', '$0.004', '$0.125', '$10.00'])
  })

  it('refuses bad budgets and usage that is not a call of the current round, writing nothing', async () => {
    const { agent, goal } = await withRound({ tokens: 100 })
    const before = h.records(agent).length
    expect(codeOf(() => h.root.goals.edit(agent, ref(goal), { budgets: { tokens: 0 } }))).toBe('GOAL_INVALID_BUDGET')
    expect(codeOf(() => h.root.goals.edit(agent, ref(goal), { budgets: { tokens: 1.5 } }))).toBe('GOAL_INVALID_BUDGET')
    expect(codeOf(() => h.root.goals.edit(agent, ref(goal), { budgets: { dollars: 3 } as never }))).toBe('GOAL_INVALID_BUDGET')
    expect(codeOf(() => h.root.goals.recordUsage(agent, { ...call(goal, 1, 0), round: 2 }))).toBe('GOAL_INVALID_USAGE')
    expect(codeOf(() => h.root.goals.recordUsage(agent, { ...call(goal, 1, 0), goalId: 'other' }))).toBe('GOAL_INVALID_USAGE')
    expect(codeOf(() => h.root.goals.recordUsage(agent, call(goal, -1, 0)))).toBe('GOAL_INVALID_USAGE')
    expect(codeOf(() => h.root.goals.recordUsage(agent, call(goal, 1, Number.NaN)))).toBe('GOAL_INVALID_USAGE')
    expect(h.records(agent).length).toBe(before)
  })

  it('the fold refuses a usage record for a round that is not the current one, naming it', async () => {
    const { agent, goal } = await withRound({ tokens: 100 })
    agent.session.append('goal/usage', { ...call(goal, 5, 0), round: 3 })
    expect(h.root.goals.health(agent)).toMatchObject({ ok: false, error: { code: 'GOAL_CORRUPT_LOG', message: expect.stringMatching(/goal\/usage.*round 3, but the current round is 1/) } })
  })
})
