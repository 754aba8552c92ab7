import { afterEach, describe, expect, it } from 'vitest'
import type { Agent } from '@goalkeeper/agent-loop'
import type { SessionRecord } from '@goalkeeper/session'
import { call, roundOf, toolGoalHarness, toolOutcomes, update, type Harness } from './helpers.ts'

let h: Harness
afterEach(async () => {
  await h?.dispose()
})

async function turn(agent: Agent, input: Parameters<Agent['send']>[0]): Promise<void> {
  agent.send(input)
  await agent.whenIdle()
}

const turnEnds = (records: readonly SessionRecord[]) => records.filter((r) => r.type === 'turn/end').map((r) => r.data)
const REFUSAL = 'the goal is complete and this turn had its wrap-up step; tool calls after it are refused and the turn ends here.'

describe('the wrap-up step after an autonomous complete or block', () => {
  it('refuses a tool call in the wrap-up step, records why, and ends the turn without another model call', async () => {
    h = await toolGoalHarness()
    const agent = await h.createAgent()
    const goal = h.root.goals.create(agent, { objective: 'Ship' })
    h.scripted.push(update(goal, 'complete'), call('get_goal'), { text: 'never requested' })
    await turn(agent, roundOf(goal))
    expect(h.scripted.requests).toHaveLength(2)
    expect(toolOutcomes(h, agent).map((o) => [o.name, o.ok, o.error?.code])).toEqual([['update_goal', true, undefined], ['get_goal', false, 'DENIED']])
    const results = h.readFile(agent).filter((r) => r.type === 'tool/result').map((r) => r.data as { denied?: unknown })
    expect(results[1].denied).toEqual({ by: 'tool-goal', reason: REFUSAL })
    expect(turnEnds(h.readFile(agent))).toEqual([{ turn: 1, outcome: { kind: 'aborted', cause: 'policy' } }])
    expect(h.root.goals.get(agent)).toMatchObject({ phase: 'complete' })
  })

  it('lets calls made in the same step as the complete run, and a wrap-up without tools end normally', async () => {
    h = await toolGoalHarness()
    const agent = await h.createAgent()
    const goal = h.root.goals.create(agent, { objective: 'Ship' })
    h.scripted.push(
      { toolCalls: [{ name: 'update_goal', arguments: { goal_id: goal.id, revision: goal.revision, action: 'complete' } }, { name: 'get_goal', arguments: {} }] },
      { text: 'Summary: shipped.' },
    )
    await turn(agent, roundOf(goal))
    expect(toolOutcomes(h, agent).map((o) => o.ok)).toEqual([true, true])
    expect(turnEnds(h.records(agent))).toEqual([{ turn: 1, outcome: { kind: 'completed' } }])
  })

  it('holds after a block too, and not in a human turn or the next turn', async () => {
    h = await toolGoalHarness({ blockedThreshold: 0 })
    const agent = await h.createAgent()
    let goal = h.root.goals.create(agent, { objective: 'Hard' })
    h.scripted.push(update(goal, 'block', { reason: { code: 'needs-input', message: 'Which database?' } }), call('get_goal'))
    await turn(agent, roundOf(goal))
    const denied = h.records(agent).filter((r) => r.type === 'tool/result').map((r) => r.data as { denied?: { reason: string } }).at(-1)!
    expect(denied.denied?.reason).toMatch(/^the goal is blocked and this turn had its wrap-up step/)
    // A later human turn may call tools freely, and so may a human who completes the goal.
    goal = h.root.goals.resume(agent, h.root.goals.get(agent)!)
    h.scripted.push(update(goal, 'complete'), call('get_goal'), { text: 'done' })
    await turn(agent, { content: 'it is done, complete it and show me' })
    expect(toolOutcomes(h, agent).slice(-2).map((o) => o.ok)).toEqual([true, true])
    expect(turnEnds(h.records(agent)).at(-1)).toEqual({ turn: 2, outcome: { kind: 'completed' } })
  })
})
