import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import fs from 'node:fs/promises'
import path from 'node:path'
import { createHarness, type Harness } from '../../../tests/harness.ts'
import * as goalPlugin from '@goalkeeper/goal'
import * as loopGuard from '@goalkeeper/loop-guard'
import { call, done, outcomes, pluginMessages, prompt, repeat, tools } from './util.ts'

let h: Harness
beforeEach(async () => {
  h = await createHarness()
  await fs.writeFile(path.join(h.workspace, 'a.txt'), 'alpha\n')
})
afterEach(() => h.dispose())

describe('loop-guard in a goal round', () => {
  it('blocks the live goal with repeated-tool-call before cancelling the round', async () => {
    await h.load(goalPlugin, {})
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    const goal = h.root.goals.create(agent, { objective: 'summarise a.txt' })
    const events = h.events(['goal/changed', 'agent/cancel-requested'])
    h.scripted.push(...repeat(6, () => tools(call('read_file', { path: 'a.txt' }))))
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

  it('stops like outside a goal when the round is stale (the goal moved on during the turn)', async () => {
    await h.load(goalPlugin, {})
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    const goal = h.root.goals.create(agent, { objective: 'summarise a.txt' })
    h.scripted.push(...repeat(4, () => tools(call('read_file', { path: 'a.txt' }))), () => {
      // A human pauses the goal mid-round: the round is no longer the live goal's.
      const live = h.root.goals.get(agent)!
      h.root.goals.pause(agent, { id: live.id, revision: live.revision })
      return tools(call('read_file', { path: 'a.txt' }))
    })
    await prompt(agent, 'round 1', { kind: 'goal', goalId: goal.id, revision: goal.revision, round: 1 })
    expect(h.root.goals.get(agent)!.phase).toBe('paused')
    expect(pluginMessages(h.records(agent), 'loop-guard')[1]).toMatch(/^Loop guard stopped this turn/)
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'aborted', cause: 'policy' }])
  })

  it('works without the goal plugin loaded, even for a goal-sourced turn', async () => {
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    h.scripted.push(...repeat(5, () => tools(call('read_file', { path: 'a.txt' }))), done())
    await prompt(agent, 'round 1', { kind: 'goal', goalId: 'g1', revision: 1, round: 1 })
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'aborted', cause: 'policy' }])
    expect(pluginMessages(h.records(agent), 'loop-guard')[1]).toMatch(/^Loop guard stopped this turn/)
  })
})
