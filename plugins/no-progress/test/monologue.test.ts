import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Agent } from '@goalkeeper/agent-loop'
import * as goalPlugin from '@goalkeeper/goal'
import * as noProgress from '@goalkeeper/no-progress'
import { done, harnessWith, outcomes, pluginMessages, prompt, repeat, type Harness } from '@goalkeeper/test-kit'

let h: Harness
beforeEach(async () => { h = await harnessWith({ 'a.txt': 'alpha\n' }) })
afterEach(() => h.dispose())

/** Keeps a turn going the way a host that auto-continues would: a plugin message after each reply without a tool call. */
function nudge(agent: Agent, times: number) {
  let left = times
  h.root.on('agent/step-end', (target, _turn, _step, summary) => {
    if (target === agent && !summary.toolCalls.length && left-- > 0) agent.steer({ content: 'Continue.', source: { kind: 'plugin', name: 'nudger' } })
  })
}

describe('no-progress monologue', () => {
  it('stops a turn whose replies repeat without a tool call, naming the text', async () => {
    await h.load(noProgress, {})
    const agent = await h.createAgent()
    nudge(agent, 10)
    h.scripted.push(done('Let me think about this.'), done('Let me think about this.'), done('Let me  think about this!'), done('never requested'))
    await prompt(agent, 'go')
    expect(h.scripted.requests).toHaveLength(3)
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'aborted', cause: 'policy' }])
    expect(pluginMessages(h.records(agent), 'no-progress')).toEqual([
      'No-progress guard stopped this turn: the model replied 3 times in a row without calling a tool, with nearly the same text each time: '
      + '"Let me think about this!". The session is kept; a new message continues from here.',
    ])
  })

  it('counts empty replies the same way', async () => {
    await h.load(noProgress, {})
    const agent = await h.createAgent()
    nudge(agent, 10)
    h.scripted.push({}, {}, {}, done('never requested'))
    await prompt(agent, 'go')
    expect(h.scripted.requests).toHaveLength(3)
    expect(pluginMessages(h.records(agent), 'no-progress')[0]).toMatch(/the model replied 3 times in a row without calling a tool, with an empty reply each time\./)
  })

  it('blocks the goal with no-progress when the monologue is a goal round', async () => {
    await h.load(goalPlugin, {})
    await h.load(noProgress, {})
    const agent = await h.createAgent()
    const goal = h.root.goals.create(agent, { objective: 'summarise a.txt' })
    nudge(agent, 10)
    h.scripted.push(...repeat(3, (i) => done(`Working on it (step ${i + 1}).`)))
    await prompt(agent, 'round 1', { kind: 'goal', goalId: goal.id, revision: goal.revision, round: 1 })
    expect(h.root.goals.get(agent)!.blockedReason).toEqual({
      code: 'no-progress',
      message: 'The model replied 3 times in a row without calling a tool, with nearly the same text each time: "Working on it (step 3).".',
    })
  })

  it('leaves different replies alone, and text-only human turns are never rounds', async () => {
    await h.load(noProgress, {})
    const agent = await h.createAgent()
    nudge(agent, 3)
    h.scripted.push(done('First, the plan.'), done('Then the risks.'), done('Then the schedule.'), done('Done: all three parts.'))
    await prompt(agent, 'write a plan in four parts')
    for (let i = 0; i < 4; i++) {
      h.scripted.push(done('Sure.'))
      await prompt(agent, `question ${i}`)
    }
    expect(pluginMessages(h.records(agent), 'no-progress')).toEqual([])
    expect(outcomes(h.records(agent)).every((o) => o.kind === 'completed')).toBe(true)
  })

  it('with monologue 0, repeated replies are not stopped', async () => {
    await h.load(noProgress, { monologue: 0 })
    const agent = await h.createAgent()
    nudge(agent, 4)
    h.scripted.push(...repeat(5, () => done('Same.')))
    await prompt(agent, 'go')
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'completed' }])
  })
})

describe('no-progress config and lifecycle', () => {
  it('rejects bad config with a clear message', async () => {
    await expect(h.load(noProgress, { round: 3 })).rejects.toThrow(/round unknown option \(known options: rounds, /)
    await expect(h.load(noProgress, { rounds: 0 })).rejects.toThrow(/rounds expected number >= 1/)
    await expect(h.load(noProgress, { textSimilarity: 2 })).rejects.toThrow(/textSimilarity expected number <= 1/)
  })

  it('drops state on unload and starts clean after a reload', async () => {
    await h.load(goalPlugin, {})
    const fiber = await h.load(noProgress, {})
    const agent = await h.createAgent()
    const goal = h.root.goals.create(agent, { objective: 'summarise a.txt' })
    const round = async (n: number, ...texts: string[]) => {
      h.scripted.push(...texts.map((t) => done(t)))
      await prompt(agent, `round ${n}`, { kind: 'goal', goalId: goal.id, revision: goal.revision, round: n })
    }
    await round(1, 'idle')
    await round(2, 'idle')
    await fiber.dispose()
    await h.load(noProgress, {})
    await round(3, 'idle')
    await round(4, 'idle')
    expect(h.root.goals.get(agent)!.phase).toBe('active')
  })
})
