import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Agent } from '@goalkeeper/agent-loop'
import * as goalPlugin from '@goalkeeper/goal'
import * as loopGuard from '@goalkeeper/loop-guard'
import { done, harnessWith, outcomes, pluginMessages, prompt, readA, repeat, type Harness } from '@goalkeeper/test-kit'

let h: Harness
beforeEach(async () => { h = await harnessWith({ 'a.txt': 'alpha\n' }) })
afterEach(() => h.dispose())

describe('loop-guard in a goal round', () => {
  it('blocks the live goal with repeated-tool-call before cancelling the round', async () => {
    await h.load(goalPlugin, {})
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    const goal = h.root.goals.create(agent, { objective: 'summarise a.txt' })
    const events = h.events(['goal/changed', 'agent/cancel-requested'])
    h.scripted.push(...repeat(6, readA))
    await prompt(agent, 'round 1', { kind: 'goal', goalId: goal.id, revision: goal.revision, round: 1 })

    const state = h.root.goals.get(agent)!
    expect(state.phase).toBe('blocked')
    expect(state.blockedReason).toEqual({
      code: 'repeated-tool-call',
      message: '`read_file` {"path":"a.txt"} was called 5 times in a row with the same arguments and returned the same result each time.',
    })
    // Block first, then cancel: the round driver sees a moved revision and does nothing more.
    expect(events.map((e) => e.name)).toEqual(['goal/changed', 'agent/cancel-requested'])
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'aborted', cause: 'policy' }])
    // In a goal round the blocked reason carries the explanation; only the soft hint is a plugin message.
    expect(pluginMessages(h.records(agent), 'loop-guard')).toHaveLength(1)
    expect(h.scripted.requests).toHaveLength(5)
  })

  // The round is no longer the live goal's: the stop takes the outside-a-goal path and still lands.
  const interferences: [string, (agent: Agent) => void, (agent: Agent) => void][] = [
    ['the goal moved on (a human paused it mid-round)', (agent) => {
      const live = h.root.goals.get(agent)!
      h.root.goals.pause(agent, { id: live.id, revision: live.revision })
    }, (agent) => expect(h.root.goals.get(agent)!.phase).toBe('paused')],
    ['the goal log turned corrupt mid-round', (agent) => {
      agent.session.append<string>('goal/change', { op: 'pause', goal: { id: h.root.goals.get(agent)!.id } })
    }, (agent) => expect(h.root.goals.health(agent)).toMatchObject({ ok: false, error: { message: expect.stringMatching(/goal log is corrupt/) } })],
  ]
  for (const [label, interfere, check] of interferences) {
    it(`stops like outside a goal when ${label}`, async () => {
      await h.load(goalPlugin, {})
      await h.load(loopGuard, {})
      const agent = await h.createAgent()
      const goal = h.root.goals.create(agent, { objective: 'summarise a.txt' })
      h.scripted.push(...repeat(4, readA), () => {
        interfere(agent)
        return readA()
      })
      await prompt(agent, 'round 1', { kind: 'goal', goalId: goal.id, revision: goal.revision, round: 1 })
      check(agent)
      expect(pluginMessages(h.records(agent), 'loop-guard')[1]).toMatch(/^Loop guard stopped this turn/)
      expect(outcomes(h.records(agent))).toEqual([{ kind: 'aborted', cause: 'policy' }])
    })
  }

  it('starts over when a human re-arms the goal (/goal resume), so the resumed rounds do not inherit the streak', async () => {
    await h.load(goalPlugin, {})
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    let goal = h.root.goals.create(agent, { objective: 'summarise a.txt' })
    h.scripted.push(...repeat(4, readA), done('stuck'))
    await prompt(agent, 'round 1', { kind: 'goal', goalId: goal.id, revision: goal.revision, round: 1 })
    goal = h.root.goals.pause(agent, { id: goal.id, revision: goal.revision })
    goal = h.root.goals.resume(agent, { id: goal.id, revision: goal.revision })
    h.scripted.push(readA(), done('summary'))
    await prompt(agent, 'round 2', { kind: 'goal', goalId: goal.id, revision: goal.revision, round: 2 })
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'completed' }, { kind: 'completed' }])
    expect(h.root.goals.get(agent)!.phase).toBe('active')
  })

  it('works without the goal plugin loaded, even for a goal-sourced turn', async () => {
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    h.scripted.push(...repeat(5, readA), done())
    await prompt(agent, 'round 1', { kind: 'goal', goalId: 'g1', revision: 1, round: 1 })
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'aborted', cause: 'policy' }])
    expect(pluginMessages(h.records(agent), 'loop-guard')[1]).toMatch(/^Loop guard stopped this turn/)
  })
})
