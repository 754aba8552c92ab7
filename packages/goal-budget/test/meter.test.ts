import { afterEach, describe, expect, it } from 'vitest'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { foldGoal } from '@goalkeeper/goal'
import { untilGoalStops } from '@goalkeeper/test-kit'
import { setup, usage, userTexts, working, type BudgetSetup } from './helpers.ts'

let s: BudgetSetup | undefined
afterEach(async () => {
  await s?.h.dispose()
  s = undefined
})

const WRAP_UP = /budget is used up .*Stop calling tools\. Reply with a short summary/

/** Live state and the replay of the JSONL file agree, activation aside. */
async function expectReplayEqualsLive(): Promise<void> {
  const { h, agent } = s!
  await h.root.sessions.flush(agent.session)
  const { activation: _, ...live } = h.root.goals.get(agent)!
  expect(foldGoal(h.readFile(agent))).toEqual(live)
}

describe('goal budgets', () => {
  it('counts tokens the Codex way per model call; at the budget mid-round: one wrap-up call, then blocked budget-limited', async () => {
    s = await setup()
    const { h, agent } = s
    // input - cached + output: 700 - 200 + 100 = 600 per call.
    h.scripted.push(working(usage(700, 100, 200)), working(usage(700, 100, 200)), { text: 'Summary: half done.', usage: usage(900, 50, 800) }, { text: 'never asked' })
    h.root.goals.create(agent, { objective: 'Refactor', budgets: { tokens: 1000 } })
    const goal = await untilGoalStops(h.root, agent)
    expect(goal).toMatchObject({
      phase: 'blocked',
      blockedReason: { code: 'budget-limited', message: 'The token budget is used up: 1200 of 1000 tokens.' },
      spent: { tokens: 1350, costUsd: 0, calls: 3 },
      roundsStarted: 1,
    })
    expect(h.scripted.requests).toHaveLength(3)
    expect(userTexts(h.scripted.requests[2]).filter((t) => WRAP_UP.test(t))).toHaveLength(1)
    expect(userTexts(h.scripted.requests[1]).some((t) => WRAP_UP.test(t))).toBe(false)
    expect(h.records(agent).filter((r) => r.type === 'goal/usage').map((r) => (r.data as { tokens: number }).tokens)).toEqual([600, 600, 150])
    await expectReplayEqualsLive()
  })

  it('a model that keeps calling tools after the wrap-up is stopped before its next call', async () => {
    s = await setup()
    const { h, agent } = s
    h.scripted.push(working(usage(800, 300)), working(usage(10, 10)), { text: 'never asked' })
    h.root.goals.create(agent, { objective: 'Refactor', budgets: { tokens: 1000 } })
    const goal = await untilGoalStops(h.root, agent)
    expect(goal).toMatchObject({ phase: 'blocked', blockedReason: { code: 'budget-limited' } })
    expect(h.scripted.requests).toHaveLength(2)
    expect(h.records(agent).filter((r) => r.type === 'turn/end').map((r) => (r.data as { outcome: { kind: string } }).outcome.kind)).toEqual(['aborted'])
    await expectReplayEqualsLive()
  })

  it('a tool call in the wrap-up step is refused and never runs: the file it would write does not exist', async () => {
    s = await setup()
    const { h, agent } = s
    const write = { text: 'one more thing', toolCalls: [{ name: 'write_file', arguments: { path: 'after-stop.txt', content: 'x' } }], usage: usage(10, 10) }
    h.scripted.push(working(usage(800, 300)), write, { text: 'never asked' })
    h.root.goals.create(agent, { objective: 'Refactor', budgets: { tokens: 1000 } })
    await untilGoalStops(h.root, agent)
    expect(existsSync(path.join(h.workspace, 'after-stop.txt'))).toBe(false)
    const results = h.records(agent).filter((r) => r.type === 'tool/result').map((r) => r.data as { ok: boolean; error?: { code: string }; denied?: { by: string; reason: string } })
    expect(results.at(-1)).toMatchObject({ ok: false, error: { code: 'DENIED' }, denied: { by: 'goal-budget', reason: expect.stringContaining('budget-limited') } })
    // The wrap-up was the one call after the stop; the refusal ended the turn.
    expect(h.scripted.requests).toHaveLength(2)
    expect(h.records(agent).filter((r) => r.type === 'turn/end').map((r) => r.data)).toEqual([{ turn: 1, outcome: { kind: 'aborted', cause: 'policy' } }])
  })

  it('a round that ends at the budget needs no wrap-up call: its reply is the summary', async () => {
    s = await setup()
    const { h, agent } = s
    h.scripted.push({ text: 'Round one.', usage: usage(400, 100) }, { text: 'Round two.', usage: usage(400, 100) }, { text: 'never asked' })
    h.root.goals.create(agent, { objective: 'Refactor', budgets: { tokens: 1000 } })
    const goal = await untilGoalStops(h.root, agent)
    expect(goal).toMatchObject({ phase: 'blocked', roundsStarted: 2, spent: { tokens: 1000, calls: 2 }, blockedReason: { code: 'budget-limited' } })
    expect(h.scripted.requests).toHaveLength(2)
    expect(h.scripted.requests.flatMap(userTexts).some((t) => WRAP_UP.test(t))).toBe(false)
  })

  it('prices calls from the cordis.yml table; the cost budget stops the goal', async () => {
    s = await setup({ billedAs: 'acme/m1', config: { prices: { 'acme/m1': { input: 2, cachedInput: 0.5, output: 8 } } } })
    const { h, agent } = s
    // (1000 - 500) * 2 + 500 * 0.5 + 250 * 8 per million = 0.00325 USD a call.
    h.scripted.push(...Array.from({ length: 4 }, () => ({ text: 'A round.', usage: usage(1000, 250, 500) })), { text: 'never asked' })
    h.root.goals.create(agent, { objective: 'Cheap work', budgets: { costUsd: 0.01 } })
    const goal = await untilGoalStops(h.root, agent)
    expect(goal).toMatchObject({ phase: 'blocked', roundsStarted: 4, blockedReason: { code: 'budget-limited', message: expect.stringMatching(/^The cost budget is used up: \$0\.0130 of \$0\.01\./) } })
    expect(goal!.spent!.costUsd).toBeCloseTo(0.013, 10)
    await expectReplayEqualsLive()
  })

  it('a model without a known price has an unknown cost, never zero', async () => {
    s = await setup({ billedAs: 'acme/mystery' })
    const { h, agent } = s
    h.scripted.push({ text: 'One.', usage: usage(100, 10) })
    h.root.goals.create(agent, { objective: 'Unpriced', maxGoalRounds: 1 })
    const goal = await untilGoalStops(h.root, agent)
    expect(goal).toMatchObject({ phase: 'blocked', spent: { costUsd: null, tokens: 110 }, blockedReason: { code: 'round-limit' } })
    await expectReplayEqualsLive()
  })

  it('a cost budget on a model without a known price blocks the goal before its first call, naming the prices key', async () => {
    s = await setup({ billedAs: 'acme/mystery' })
    const { h, agent } = s
    h.scripted.push({ text: 'never asked' })
    h.root.goals.create(agent, { objective: 'Unpriced', budgets: { costUsd: 1 } })
    const goal = await untilGoalStops(h.root, agent)
    expect(goal).toMatchObject({ phase: 'blocked', roundsStarted: 0, blockedReason: { code: 'budget-limited', message: expect.stringContaining('model acme/mystery has no known price: set its price') } })
    expect(h.scripted.requests).toHaveLength(0)
    await expectReplayEqualsLive()
  })

  it('an answer without a usage report from a priced remote model makes the cost unknown; a cost budget then stops the goal', async () => {
    s = await setup({ billedAs: 'acme/m1', config: { prices: { 'acme/m1': { input: 1, output: 1 } } } })
    const { h, agent } = s
    h.scripted.push(working(usage(100, 10)), { text: 'Summary.' }, { text: 'never asked' })
    h.root.goals.create(agent, { objective: 'No usage', budgets: { costUsd: 1 } })
    const goal = await untilGoalStops(h.root, agent)
    expect(goal).toMatchObject({ phase: 'blocked', spent: { costUsd: null, tokens: 110 }, blockedReason: { code: 'budget-limited', message: expect.stringMatching(/no known price/) } })
    await expectReplayEqualsLive()
  })

  it('the time budget counts wall time in rounds', async () => {
    s = await setup()
    const { h, agent } = s
    h.scripted.push({ text: 'A slow round.', delayMs: 120 }, { text: 'never asked' })
    h.root.goals.create(agent, { objective: 'Slow work', budgets: { activeTimeMs: 100 } })
    const goal = await untilGoalStops(h.root, agent)
    expect(goal).toMatchObject({ phase: 'blocked', roundsStarted: 1, blockedReason: { code: 'budget-limited', message: expect.stringMatching(/^The time budget is used up/) } })
    expect(goal!.spent!.activeTimeMs).toBeGreaterThanOrEqual(120)
  })

  it('a raised budget lets the goal resume where it stopped, with its spend kept', async () => {
    s = await setup()
    const { h, agent } = s
    h.scripted.push({ text: 'One.', usage: usage(500, 100) }, { text: 'Two.', usage: usage(500, 100) }, { text: 'never asked' })
    h.root.goals.create(agent, { objective: 'Refactor', budgets: { tokens: 500 }, maxGoalRounds: 2 })
    let goal = (await untilGoalStops(h.root, agent))!
    expect(goal).toMatchObject({ phase: 'blocked', blockedReason: { code: 'budget-limited' } })
    expect(() => h.root.goals.resume(agent, goal)).toThrow(expect.objectContaining({ code: 'GOAL_BUDGET_LIMIT' }))
    goal = h.root.goals.edit(agent, goal, { budgets: { tokens: 5000 } })
    h.root.goals.resume(agent, goal)
    goal = (await untilGoalStops(h.root, agent))!
    expect(goal).toMatchObject({ phase: 'blocked', roundsStarted: 2, spent: { tokens: 1200, calls: 2 }, blockedReason: { code: 'round-limit' } })
    await expectReplayEqualsLive()
  })

  it('human turns and goals without budgets are metered only while a round runs', async () => {
    s = await setup()
    const { h, agent } = s
    h.scripted.push({ text: 'hello', usage: usage(50, 5) })
    agent.send({ content: 'hi' })
    await agent.whenIdle()
    expect(h.records(agent).some((r) => r.type === 'goal/usage')).toBe(false)
    h.scripted.push({ text: 'done', usage: usage(50, 5) }, { text: 'done', usage: usage(50, 5) })
    h.root.goals.create(agent, { objective: 'Unbounded', maxGoalRounds: 2 })
    const goal = await untilGoalStops(h.root, agent)
    expect(goal).toMatchObject({ phase: 'blocked', blockedReason: { code: 'round-limit' }, spent: { tokens: 110, calls: 2 } })
    expect(goal).not.toHaveProperty('budgets')
  })

  it('a budget lowered below the spend blocks the goal before another round starts; mid-round, the running round wraps up', async () => {
    s = await setup()
    const { h, agent } = s
    h.scripted.push({ text: 'One.', usage: usage(300, 100) }, () => {
      // A person lowers the budget while round 2 runs: the round's next step end wraps it up.
      const goal = h.root.goals.get(agent)!
      h.root.goals.edit(agent, goal, { budgets: { tokens: 300 } })
      return working(usage(10, 10))
    }, { text: 'Summary after the wrap-up.', usage: usage(10, 10) }, { text: 'never asked' })
    h.root.goals.create(agent, { objective: 'Refactor', budgets: { tokens: 10_000 } })
    const goal = await untilGoalStops(h.root, agent)
    expect(goal).toMatchObject({ phase: 'blocked', roundsStarted: 2, blockedReason: { code: 'budget-limited', message: 'The token budget is used up: 400 of 300 tokens.' } })
    expect(h.scripted.requests).toHaveLength(3)
    expect(userTexts(h.scripted.requests[2]).filter((t) => WRAP_UP.test(t))).toHaveLength(1)
    await expectReplayEqualsLive()
  })
})
