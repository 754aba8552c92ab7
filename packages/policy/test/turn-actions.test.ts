import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Context } from 'cordis'
import type { Agent } from '@goalkeeper/agent-loop'
import * as goalPlugin from '@goalkeeper/goal'
import { actOnVerdict, continueTurn, escalate, stopTurn } from '@goalkeeper/policy'
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

describe('escalate and actOnVerdict', () => {
  const texts = {
    source: 'tester', code: 'test-stop', guidance: 'Default guidance.',
    blockText: (reason?: string) => `Blocked${reason ? ` (${reason})` : ''}.`,
    stopText: (reason?: string) => `Stopped${reason ? ` (${reason})` : ''}.`,
  }

  /** A policy stand-in that escalates on the first step and acts on the answer. */
  async function loadEscalator() {
    const seen: unknown[] = []
    await h.load({
      name: 'tester',
      apply: (ctx: Context) => {
        ctx.on('agent/step-end', async (agent, turn, step) => {
          if (step !== 1) return
          const verdict = await escalate(ctx, agent, { source: 'tester', code: 'test-stop', message: 'Looks stuck', turn }, 5_000)
          seen.push(verdict)
          if (verdict !== 'abandoned') actOnVerdict(ctx, agent, turn, verdict, texts)
        })
      },
    })
    return seen
  }

  it('a continue without guidance steers the default guidance; a stop with a reason passes it to the texts', async () => {
    const answers = [{ action: 'continue' }, { action: 'stop', reason: 'enough' }]
    h.root.on('policy/escalate', () => answers.shift() as never)
    const seen = await loadEscalator()
    const agent = await h.createAgent()
    h.scripted.push(read(), done(), read(), done())
    await prompt(agent, 'first')
    await prompt(agent, 'second')
    expect(seen).toEqual([{ action: 'continue' }, { action: 'stop', reason: 'enough' }])
    expect(pluginMessages(h.records(agent), 'tester')).toEqual(['Default guidance.', 'Stopped (enough).'])
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'completed' }, { kind: 'aborted', cause: 'policy' }])
  })

  it('nobody answering, a throwing listener or garbage all mean "stop on your own", the last two logged', async () => {
    const listeners = [() => undefined, () => { throw new Error('boom') }, () => 'garbage' as never]
    let current = 0
    h.root.on('policy/escalate', () => listeners[current]())
    const seen = await loadEscalator()
    const agent = await h.createAgent()
    for (current = 0; current < listeners.length; current++) {
      h.scripted.push(read(), done())
      await prompt(agent, `try ${current}`)
    }
    expect(seen).toEqual([undefined, undefined, undefined])
    expect(pluginMessages(h.records(agent), 'tester')).toEqual(['Stopped.', 'Stopped.', 'Stopped.'])
    expect(h.logs.filter((l) => l.name === 'tester' && l.level === 'warn').map((l) => l.text)).toEqual([
      expect.stringMatching(/a policy\/escalate listener failed; stopping: boom/),
      expect.stringMatching(/ignoring a malformed policy\/escalate verdict/),
    ])
  })
})
