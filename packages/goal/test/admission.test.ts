import { afterEach, describe, expect, it } from 'vitest'
import type { Agent } from '@goalkeeper/agent-loop'
import type { UserMessage } from '@goalkeeper/session'
import type { GoalState } from '../src/index.ts'
import { goalHarness, type Harness } from './helpers.ts'

let h: Harness
afterEach(() => h?.dispose())

async function setup(maxGoalRounds = 3): Promise<{ agent: Agent; goal: GoalState }> {
  h = await goalHarness()
  const agent = await h.createAgent()
  return { agent, goal: h.root.goals.create(agent, { objective: 'Admit me', maxGoalRounds }) }
}

function round(goal: GoalState, over: Partial<{ goalId: string; revision: number; round: number }> = {}) {
  return { content: 'goal round', source: { kind: 'goal' as const, goalId: goal.id, revision: goal.revision, round: goal.roundsStarted + 1, ...over } }
}

function admitted(agent: Agent): UserMessage[] {
  return h.records(agent).filter((r) => r.type === 'user/message').map((r) => r.data as UserMessage)
}

function rejected(agent: Agent): string[] {
  return h.records(agent).filter((r) => r.type === 'input/rejected').map((r) => (r.data as { messageId: string }).messageId)
}

async function sendAll(agent: Agent, ...inputs: Parameters<Agent['send']>[0][]): Promise<UserMessage[]> {
  const sent = inputs.map((input) => agent.send(input))
  await agent.whenIdle()
  return sent
}

describe('goal round admission through the agent loop', () => {
  it('admits and counts the legal next round', async () => {
    const { agent, goal } = await setup()
    h.scripted.push({ text: 'did round 1' }, { text: 'did round 2' })
    const [first] = await sendAll(agent, round(goal))
    expect(admitted(agent).map((m) => m.id)).toEqual([first.id])
    expect(h.root.goals.get(agent)?.roundsStarted).toBe(1)
    await sendAll(agent, round(h.root.goals.get(agent)!))
    expect(h.root.goals.get(agent)).toMatchObject({ roundsStarted: 2, revision: 1 })
    expect(h.records(agent).filter((r) => r.type === 'turn/start')).toHaveLength(2)
  })

  const illegal: [string, (goal: GoalState) => ReturnType<typeof round>][] = [
    ['a skipped round', (goal) => round(goal, { round: 2 })],
    ['a repeated round', (goal) => round(goal, { round: 0 })],
    ['a stale revision', (goal) => round(goal, { revision: goal.revision - 1 })],
    ['a future revision', (goal) => round(goal, { revision: goal.revision + 1 })],
    ['another goal id', (goal) => round(goal, { goalId: 'not-the-goal' })],
  ]
  for (const [name, make] of illegal) {
    it(`drops ${name} without opening a turn`, async () => {
      const { agent, goal } = await setup()
      const edited = h.root.goals.edit(agent, goal, { objective: 'Admit me, revised' })
      const [message] = await sendAll(agent, make(edited))
      expect(rejected(agent)).toEqual([message.id])
      expect(admitted(agent)).toEqual([])
      expect(h.records(agent).some((r) => r.type === 'turn/start')).toBe(false)
      expect(h.root.goals.get(agent)?.roundsStarted).toBe(0)
    })
  }

  it('drops rounds of a paused goal', async () => {
    const { agent, goal } = await setup()
    const paused = h.root.goals.pause(agent, goal)
    const [message] = await sendAll(agent, round(paused))
    expect(rejected(agent)).toEqual([message.id])
    expect(h.root.goals.get(agent)?.roundsStarted).toBe(0)
  })

  it('drops a round beyond the cap', async () => {
    const { agent, goal } = await setup(1)
    h.scripted.push({ text: 'only round' })
    await sendAll(agent, round(goal))
    const [late] = await sendAll(agent, round(h.root.goals.get(agent)!))
    expect(rejected(agent)).toEqual([late.id])
    expect(h.root.goals.get(agent)?.roundsStarted).toBe(1)
  })

  it('drops goal rounds when there is no goal', async () => {
    h = await goalHarness()
    const agent = await h.createAgent()
    const [message] = await sendAll(agent, { content: 'x', source: { kind: 'goal', goalId: 'g', revision: 1, round: 1 } })
    expect(rejected(agent)).toEqual([message.id])
  })

  it('admits at most one round per batch, and human input in the batch still goes through', async () => {
    const { agent, goal } = await setup()
    h.scripted.push({ text: 'both' })
    const [first, second, human, third] = await sendAll(agent, round(goal), round(goal), { content: 'human note' }, round(goal, { round: 2 }))
    expect(admitted(agent).map((m) => m.id)).toEqual([first.id, human.id])
    expect(rejected(agent).sort()).toEqual([second.id, third.id].sort())
    expect(h.root.goals.get(agent)?.roundsStarted).toBe(1)
  })

  it('judges the decision that comes back: a goal paused by an inner listener loses its round', async () => {
    const { agent, goal } = await setup()
    h.root.on('agent/prompt-submit', async (target, _submission, next) => {
      const live = h.root.goals.get(target)!
      if (live.phase === 'active') h.root.goals.pause(target, live)
      return next()
    })
    const [message] = await sendAll(agent, round(goal))
    expect(rejected(agent)).toEqual([message.id])
    expect(h.root.goals.get(agent)).toMatchObject({ phase: 'paused', roundsStarted: 0 })
  })

  it('an outer listener that re-adds a dropped second round is vetoed as the turn opens; the log stays legal', async () => {
    const { agent, goal } = await setup()
    // Prepended after the goal plugin: it wraps the plugin's admission and restores the whole batch.
    h.root.on('agent/prompt-submit', async (_target, submission, next) => {
      const batch = [...submission.messages]
      await next()
      return { kind: 'submit', messages: batch }
    }, { prepend: true })
    h.scripted.push({ text: 'ok' })
    const [first, second] = await sendAll(agent, round(goal), round(goal))
    expect(admitted(agent).map((m) => m.id)).toEqual([first.id])
    expect(h.records(agent).filter((r) => r.type === 'input/rejected').map((r) => r.data)).toEqual([{ messageId: second.id, reason: 'illegal-goal-round' }])
    expect(h.root.goals.get(agent)).toMatchObject({ roundsStarted: 1 })
  })

  it('an inner listener cannot smuggle a dropped round back in', async () => {
    const { agent, goal } = await setup()
    let batch: UserMessage[] = []
    h.root.on('agent/prompt-submit', async (_target, submission, next) => {
      batch = [...submission.messages]
      await next()
      return { kind: 'submit', messages: batch }
    })
    h.scripted.push({ text: 'ok' })
    const [legal, skipped] = await sendAll(agent, round(goal), round(goal, { round: 2 }))
    expect(admitted(agent).map((m) => m.id)).toEqual([legal.id])
    expect(rejected(agent)).toEqual([skipped.id])
  })
})
