import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import * as goalPlugin from '@goalkeeper/goal'
import * as mistakeLimit from '@goalkeeper/mistake-limit'
import { call, done, harnessWith, outcomes, pluginMessages, prompt, tools, type Harness } from '@goalkeeper/test-kit'

let h: Harness
beforeEach(async () => { h = await harnessWith() })
afterEach(() => h.dispose())

describe('mistake-limit in a goal round', () => {
  it('blocks the goal with code mistake-limit first, then cancels the round', async () => {
    await h.load(goalPlugin, {})
    await h.load(mistakeLimit, { limit: 2 })
    h.root.on('mistake-limit/reached', () => ({ action: 'stop', reason: 'unattended run' }))
    const agent = await h.createAgent()
    const goal = h.root.goals.create(agent, { objective: 'fix the build' })
    const events = h.events(['goal/changed', 'agent/cancel-requested'])
    h.scripted.push(tools(call('read_file', { path: 'x.txt' })), tools(call('edit_file', { path: 'x.txt', old_text: 'a', new_text: 'b' })))
    await prompt(agent, 'round 1', { kind: 'goal', goalId: goal.id, revision: goal.revision, round: 1 })

    const state = h.root.goals.get(agent)!
    expect(state.phase).toBe('blocked')
    expect(state.blockedReason?.code).toBe('mistake-limit')
    expect(state.blockedReason?.message).toMatch(/^2 consecutive steps in which every tool call failed \(limit 2\)\. Last errors: `read_file` NOT_FOUND: .*; `edit_file` .*\. Decision: unattended run\.$/)
    expect(events.map((e) => e.name)).toEqual(['goal/changed', 'agent/cancel-requested'])
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'aborted', cause: 'policy' }])
    expect(pluginMessages(h.records(agent), 'mistake-limit')).toEqual([])
  })

  it('starts over when a human re-arms the goal (/goal resume), so the resumed rounds do not inherit the count', async () => {
    await h.load(goalPlugin, {})
    await h.load(mistakeLimit, { limit: 3 })
    const agent = await h.createAgent()
    let goal = h.root.goals.create(agent, { objective: 'fix the build' })
    const missing = (n: number) => tools(call('read_file', { path: `missing-${n}.txt` }))
    h.scripted.push(missing(1), missing(2), done('stuck'))
    await prompt(agent, 'round 1', { kind: 'goal', goalId: goal.id, revision: goal.revision, round: 1 })
    goal = h.root.goals.pause(agent, { id: goal.id, revision: goal.revision })
    goal = h.root.goals.resume(agent, { id: goal.id, revision: goal.revision })
    h.scripted.push(missing(3), done('found it'))
    await prompt(agent, 'round 2', { kind: 'goal', goalId: goal.id, revision: goal.revision, round: 2 })
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'completed' }, { kind: 'completed' }])
    expect(h.root.goals.get(agent)!.phase).toBe('active')
  })

  it('works without the goal plugin loaded, even for a goal-sourced turn', async () => {
    await h.load(mistakeLimit, { limit: 2 })
    const agent = await h.createAgent()
    h.scripted.push(tools(call('read_file', { path: 'x.txt' })), tools(call('read_file', { path: 'y.txt' })), done())
    await prompt(agent, 'round 1', { kind: 'goal', goalId: 'g1', revision: 1, round: 1 })
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'aborted', cause: 'policy' }])
    expect(pluginMessages(h.records(agent), 'mistake-limit')[0]).toMatch(/^Mistake limit stopped this turn: 2 consecutive steps/)
  })
})
