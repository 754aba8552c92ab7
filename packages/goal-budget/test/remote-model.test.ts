import type http from 'node:http'
import { afterEach, describe, expect, it } from 'vitest'
import type { Agent } from '@goalkeeper/agent-loop'
import { createHarness, delta, frame, jsonError, sse, startSse, usageFrame, useOpenAIServers, untilGoalStops, type Handler, type Harness, type OpenAIServer } from '@goalkeeper/test-kit'
import * as openai from '@goalkeeper/model-openai'

// The real loop, goal plugins and this plugin, with the HTTP provider talking to a local OpenAI-compatible
// server: only the server's answers are scripted.
const serve = useOpenAIServers()
let h: Harness | undefined
let server: OpenAIServer | undefined
afterEach(async () => {
  await h?.dispose()
  h = undefined
})

const PRICES = { 'local/m1': { input: 2, output: 8 } }

async function start(handlers: Handler[], prices: Record<string, unknown> = PRICES): Promise<Agent> {
  server = await serve(handlers)
  h = await createHarness()
  await h.load(await import('@goalkeeper/goal'), {})
  await h.load(await import('@goalkeeper/tool-goal'), { blockedThreshold: 0 })
  await h.load(await import('../src/index.ts'), { prices })
  await h.load(await import('@goalkeeper/goal-session'))
  await h.load(openai, { preset: 'custom', name: 'local', baseUrl: server.url, model: 'm1', maxRetries: 0, baseDelayMs: 1 })
  return h.createAgent({ model: 'local' })
}

const answer = (text: string, usage = { prompt_tokens: 1000, completion_tokens: 250 }): Handler =>
  sse(delta({ role: 'assistant', content: text }), delta({}, 'stop'), usageFrame(usage), frame('[DONE]'))

/** Some text, then the connection drops before the answer is complete. */
const dropped = (text: string): Handler => (res: http.ServerResponse) => {
  startSse(res)
  res.write(delta({ role: 'assistant', content: text }), () => res.destroy())
}

const usageRecords = (agent: Agent) => h!.records(agent).filter((r) => r.type === 'goal/usage').map((r) => r.data as { tokens: number; costUsd: number | null })

describe('failed calls of a priced remote model', () => {
  it('a 429 without usage costs nothing: with a cost budget the goal blocks usage-limited, not budget-limited, and can be resumed', async () => {
    const agent = await start([jsonError(429, { error: { message: 'Rate limit reached' } }, { 'retry-after': '120' }), answer('Done.')])
    h!.root.goals.create(agent, { objective: 'Summarise', budgets: { costUsd: 2.5 }, maxGoalRounds: 2 })
    let goal = await untilGoalStops(h!.root, agent)
    expect(goal).toMatchObject({ phase: 'blocked', blockedReason: { code: 'usage-limited' }, spent: { costUsd: 0, tokens: 0, calls: 1 } })
    expect(usageRecords(agent)).toEqual([expect.objectContaining({ tokens: 0, costUsd: 0 })])
    // Nothing is used up, so resuming is allowed and the next call is priced normally.
    h!.root.goals.resume(agent, goal!)
    goal = await untilGoalStops(h!.root, agent)
    expect(goal!.spent!.costUsd).toBeCloseTo((1000 * 2 + 250 * 8) / 1e6, 10)
    expect(goal).toMatchObject({ phase: 'blocked', blockedReason: { code: 'round-limit' }, spent: { tokens: 1250, calls: 2 } })
  })

  it('a 500 without usage, without a cost budget: the spend stays known ($0), never "unknown"', async () => {
    const agent = await start([jsonError(500, { error: { message: 'upstream exploded' } })])
    h!.root.goals.create(agent, { objective: 'Summarise', maxGoalRounds: 1 })
    const goal = await untilGoalStops(h!.root, agent)
    expect(goal?.phase).toBe('blocked')
    expect(goal!.spent).toEqual({ tokens: 0, costUsd: 0, activeTimeMs: expect.any(Number), calls: 1 })
  })

  it('a stream cut off after output and asked again: the cut-off call costs 0, the answer is priced by its usage', async () => {
    const agent = await start([dropped('Hello!'), answer('Hello, all done.', { prompt_tokens: 500, completion_tokens: 100 })])
    h!.root.goals.create(agent, { objective: 'Greet', budgets: { costUsd: 1 }, maxGoalRounds: 1 })
    const goal = await untilGoalStops(h!.root, agent)
    const messages = h!.records(agent).filter((r) => r.type === 'assistant/message').map((r) => r.data as { text: string; partial?: boolean })
    expect(messages.map((m) => [m.text, !!m.partial])).toEqual([['Hello!', true], ['Hello, all done.', false]])
    expect(goal).toMatchObject({ blockedReason: { code: 'round-limit' }, spent: { tokens: 600, calls: 1 } })
    expect(goal!.spent!.costUsd).toBeCloseTo((500 * 2 + 100 * 8) / 1e6, 10)
  })

  it('an answer without a usage report from a remote model is still an unknown cost', async () => {
    const agent = await start([sse(delta({ role: 'assistant', content: 'No usage here.' }), delta({}, 'stop'), frame('[DONE]'))])
    h!.root.goals.create(agent, { objective: 'Greet', maxGoalRounds: 1 })
    const goal = await untilGoalStops(h!.root, agent)
    expect(goal!.spent!.costUsd).toBeNull()
  })
})

describe('ctx.goalBudget.costBudgetProblem', () => {
  it('names the exact prices key (entry name/model) and an example for a model without a price; none once it is priced', async () => {
    await start([answer('unused')], {})
    const problem = h!.root.goalBudget.costBudgetProblem('local', 2.5)
    expect(problem).toEqual({
      message: 'the cost budget ($2.50) cannot be kept: model local/m1 has no known price',
      fix: 'set its price (US dollars per million tokens) under goal-budget `prices` in cordis.yml, e.g.\n  prices:\n    local/m1: { input: 0.5, output: 1.5 }',
    })
    expect(h!.root.goalBudget.costBudgetProblem('scripted', 2.5)).toBeUndefined()
    expect(server!.received).toHaveLength(0)
  })

  it('the model\'s create_goal with a cost budget is refused the same way; the goal is not created', async () => {
    const call = { index: 0, id: 'call_1', type: 'function', function: { name: 'create_goal', arguments: JSON.stringify({ objective: 'Ship it', cost_budget_usd: 2 }) } }
    const agent = await start([sse(delta({ role: 'assistant', tool_calls: [call] }), delta({}, 'tool_calls'), frame('[DONE]')), answer('I could not set it.')], {})
    agent.send({ content: 'Make shipping it a goal with a $2 budget.' })
    await agent.whenIdle()
    const result = h!.records(agent).find((r) => r.type === 'tool/result')!.data as { ok: boolean; error: { code: string; message: string } }
    expect(result).toMatchObject({ ok: false, error: { code: 'GOAL_COST_UNPRICED', message: expect.stringContaining('model local/m1 has no known price; set its price') } })
    expect(h!.root.goals.get(agent)).toBeUndefined()
  })

  it('a goal given a cost budget some other way (the API, a queued job) is blocked before its first call', async () => {
    const agent = await start([answer('unused')], {})
    h!.root.goals.create(agent, { objective: 'Ship it', budgets: { costUsd: 2.5 } })
    const goal = await untilGoalStops(h!.root, agent)
    expect(goal).toMatchObject({
      phase: 'blocked', roundsStarted: 0,
      blockedReason: { code: 'budget-limited', message: 'The cost budget ($2.50) cannot be kept: model local/m1 has no known price: set its price (US dollars per million tokens) under goal-budget `prices` in cordis.yml, e.g. prices: local/m1: { input: 0.5, output: 1.5 }' },
    })
    expect(server!.received).toHaveLength(0)
  })

  it('a configured price makes the budget keepable', async () => {
    await start([answer('unused')])
    expect(h!.root.goalBudget.costBudgetProblem('local', 0.004)).toBeUndefined()
  })
})
