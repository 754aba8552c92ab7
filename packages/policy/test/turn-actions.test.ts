import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Context } from 'cordis'
import type { Agent } from '@goalkeeper/agent-loop'
import * as goalPlugin from '@goalkeeper/goal'
import { continueTurn, stopTurn } from '@goalkeeper/policy'
import { call, done, harnessWith, outcomes, pluginMessages, prompt, tools, userTexts, type Harness } from '@goalkeeper/test-kit'

let h: Harness
beforeEach(async () => { h = await harnessWith({ 'a.txt': 'alpha\n' }) })
afterEach(() => h.dispose())

const STOP = { source: 'tester', code: 'test-stop', blockText: 'Stopped for a test.', stopText: 'Tester stopped this turn.' }
const read = () => tools(call('read_file', { path: 'a.txt' }))

/** A policy stand-in that acts on the first step of every turn. */
async function loadActor(act: (ctx: Context, agent: Agent, turn: number) => boolean) {
  const results: boolean[] = []
  await h.load({
    name: 'tester',
    apply: (ctx: Context) => {
      ctx.on('agent/step-end', (agent, turn, step) => { if (step === 1) results.push(act(ctx, agent, turn)) })
    },
  })
  return results
}

describe('stopTurn', () => {
  it('outside a goal: steers the explanation, cancels the turn for the policy, then emits policy/settled', async () => {
    const results = await loadActor((ctx, agent, turn) => stopTurn(ctx, agent, turn, STOP))
    const agent = await h.createAgent()
    const events = h.events(['agent/cancel-requested', 'policy/settled'])
    h.scripted.push(read(), done())
    await prompt(agent, 'go')
    expect(results).toEqual([true])
    expect(pluginMessages(h.records(agent), 'tester')).toEqual(['Tester stopped this turn.'])
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'aborted', cause: 'policy' }])
    expect(events.map((e) => [e.name, e.args[1]])).toEqual([
      ['agent/cancel-requested', 'policy'],
      ['policy/settled', { source: 'tester', turn: 1, action: 'stop' }],
    ])
  })

  it('in the live goal round: blocks the goal first, without a plugin message, then cancels', async () => {
    await h.load(goalPlugin, {})
    await loadActor((ctx, agent, turn) => stopTurn(ctx, agent, turn, STOP))
    const agent = await h.createAgent()
    const goal = h.root.goals.create(agent, { objective: 'read a.txt' })
    const events = h.events(['goal/changed', 'agent/cancel-requested', 'policy/settled'])
    h.scripted.push(read(), done())
    await prompt(agent, 'round 1', { kind: 'goal', goalId: goal.id, revision: goal.revision, round: 1 })
    expect(h.root.goals.get(agent)).toMatchObject({ phase: 'blocked', blockedReason: { code: 'test-stop', message: 'Stopped for a test.' } })
    expect(events.map((e) => e.name)).toEqual(['goal/changed', 'agent/cancel-requested', 'policy/settled'])
    expect(pluginMessages(h.records(agent), 'tester')).toEqual([])
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'aborted', cause: 'policy' }])
  })

  it('does nothing for a turn that is over', async () => {
    const agent = await h.createAgent()
    h.scripted.push(done())
    await prompt(agent, 'go')
    const settled = h.events(['policy/settled', 'agent/cancel-requested'])
    const ctx = h.root
    expect(stopTurn(ctx, agent, 1, STOP)).toBe(false)
    expect(continueTurn(ctx, agent, 1, 'tester', 'go on')).toBe(false)
    expect(settled).toEqual([])
    expect(pluginMessages(h.records(agent), 'tester')).toEqual([])
  })
})

describe('continueTurn', () => {
  it('steers the guidance into the next step and emits policy/settled', async () => {
    await loadActor((ctx, agent, turn) => continueTurn(ctx, agent, turn, 'tester', 'Try another file.'))
    const agent = await h.createAgent()
    const events = h.events(['policy/settled'])
    h.scripted.push(read(), done())
    await prompt(agent, 'go')
    expect(userTexts(h.scripted.requests[1]).at(-1)).toBe('Try another file.')
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'completed' }])
    expect(events.map((e) => e.args[1])).toEqual([{ source: 'tester', turn: 1, action: 'continue' }])
  })
})
