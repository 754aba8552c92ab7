import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import * as goalPlugin from '@goalkeeper/goal'
import * as loopGuard from '@goalkeeper/loop-guard'
import * as mistakeLimit from '@goalkeeper/mistake-limit'
import type { MistakeLimitState } from '@goalkeeper/mistake-limit'
import { call, deferred, done, harnessWith, outcomes, pluginMessages, prompt, readA, repeat, tools, userTexts, watchTimers, type Harness } from '@goalkeeper/test-kit'

let h: Harness
beforeEach(async () => { h = await harnessWith({ 'a.txt': 'alpha\n' }) })
afterEach(async () => {
  vi.restoreAllMocks()
  await h.dispose()
})

const readMissing = () => tools(call('read_file', { path: 'missing.txt' }))

describe('mistake-limit answering loop-guard escalations', () => {
  it('treats a hard loop escalation as a limit hit; continue lets loop-guard steer the guidance and start over', async () => {
    const states: MistakeLimitState[] = []
    h.root.on('mistake-limit/reached', (_agent, state) => {
      states.push(state)
      return { action: 'continue', guidance: 'Stop re-reading a.txt; write the summary.' }
    })
    await h.load(mistakeLimit, {})
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    // Identical successful reads: success does not protect against the loop escalation.
    h.scripted.push(...repeat(7, readA), done())
    await prompt(agent, 'go')

    expect(states).toHaveLength(1)
    expect(states[0]).toMatchObject({
      turn: 1, count: 6, limit: 6, cause: 'policy-escalation',
      escalation: { source: 'loop-guard', code: 'repeated-tool-call', turn: 1 },
    })
    expect(userTexts(h.scripted.requests[5]).at(-1)).toBe('Stop re-reading a.txt; write the summary.')
    // Loop state was reset by the continue: the 2 later repeats stay below the soft threshold.
    expect(pluginMessages(h.records(agent), 'loop-guard')).toEqual([expect.stringMatching(/^Loop guard: .* 3 times/), 'Stop re-reading a.txt; write the summary.'])
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'completed' }])
  })

  it('a stop from the hook blocks the goal with repeated-tool-call, the truthful cause, and names the decision', async () => {
    h.root.on('mistake-limit/reached', () => ({ action: 'stop', reason: 'unattended' }))
    await h.load(goalPlugin, {})
    await h.load(mistakeLimit, {})
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    const goal = h.root.goals.create(agent, { objective: 'summarise' })
    h.scripted.push(...repeat(6, readA))
    await prompt(agent, 'round 1', { kind: 'goal', goalId: goal.id, revision: goal.revision, round: 1 })
    expect(h.root.goals.get(agent)!.blockedReason).toEqual({
      code: 'repeated-tool-call',
      message: '`read_file` {"path":"a.txt"} was called 5 times in a row with the same arguments and returned the same result each time. Decision: unattended.',
    })
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'aborted', cause: 'policy' }])
  })

  it('asks once and stops once when the loop escalation and its own limit land on the same step', async () => {
    let asked = 0
    h.root.on('mistake-limit/reached', () => (++asked, { action: 'stop' }))
    await h.load(goalPlugin, {})
    await h.load(mistakeLimit, { limit: 5 })
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    const goal = h.root.goals.create(agent, { objective: 'summarise' })
    const changes = h.events(['goal/changed'])
    h.scripted.push(...repeat(6, readMissing))
    await prompt(agent, 'round 1', { kind: 'goal', goalId: goal.id, revision: goal.revision, round: 1 })
    expect(asked).toBe(1)
    expect(changes).toHaveLength(1)
    expect(h.root.goals.get(agent)!.blockedReason?.code).toBe('repeated-tool-call')
    expect(h.logs.filter((l) => l.name === 'mistake-limit' || l.name === 'loop-guard').filter((l) => l.level === 'warn')).toEqual([])
  })

  it('the same holds when mistake-limit is loaded after loop-guard', async () => {
    let asked = 0
    h.root.on('mistake-limit/reached', () => (++asked, { action: 'continue', guidance: 'think again' }))
    await h.load(loopGuard, {})
    await h.load(mistakeLimit, { limit: 5 })
    const agent = await h.createAgent()
    h.scripted.push(...repeat(5, readMissing), done())
    await prompt(agent, 'go')
    expect(asked).toBe(1)
    expect(pluginMessages(h.records(agent), 'mistake-limit')).toEqual([])
    expect(pluginMessages(h.records(agent), 'loop-guard').at(-1)).toBe('think again')
  })

  it('with answerEscalations off, loop-guard decides alone and the hook is not asked', async () => {
    let asked = 0
    h.root.on('mistake-limit/reached', () => (++asked, { action: 'continue' }))
    await h.load(mistakeLimit, { answerEscalations: false })
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    h.scripted.push(...repeat(6, readA))
    await prompt(agent, 'go')
    expect(asked).toBe(0)
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'aborted', cause: 'policy' }])
  })

  it('loop-guard unloaded while the hook decides its escalation: that decision is dropped and the own limit still stops', async () => {
    const asked = deferred()
    let calls = 0
    h.root.on('mistake-limit/reached', () => {
      if (++calls > 1) return { action: 'stop', reason: 'second decision' }
      asked.resolve()
      return new Promise(() => {})
    })
    const timers = watchTimers(600_000)
    await h.load(mistakeLimit, { limit: 2, decisionTimeoutMs: 600_000 })
    const guard = await h.load(loopGuard, {})
    const agent = await h.createAgent()
    h.scripted.push(...repeat(5, readA), tools(call('read_file', { path: 'missing-1.txt' })), tools(call('read_file', { path: 'missing-2.txt' })), done())
    agent.send({ content: 'go' })
    await asked.promise
    await guard.dispose()
    await agent.whenIdle()

    expect(calls).toBe(2)
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'aborted', cause: 'policy' }])
    expect(pluginMessages(h.records(agent), 'mistake-limit').at(-1)).toContain('Decision: second decision.')
    // The abandoned decision's timer went with it.
    expect(timers.started.size).toBe(2)
    expect(timers.cleared).toEqual(timers.started)
  })

  it('mistake-limit unloaded while its hook decides an escalation: loop-guard gets no verdict and stops on its own', async () => {
    const asked = deferred()
    h.root.on('mistake-limit/reached', () => { asked.resolve(); return new Promise(() => {}) })
    const limiter = await h.load(mistakeLimit, {})
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    h.scripted.push(...repeat(5, readA), done())
    agent.send({ content: 'go' })
    await asked.promise
    await limiter.dispose()
    await agent.whenIdle()
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'aborted', cause: 'policy' }])
    expect(pluginMessages(h.records(agent), 'loop-guard').at(-1)).toMatch(/^Loop guard stopped this turn: .* 5 times in a row .*\. The session is kept/)
  })

  it.each([
    ['loop-guard loaded first', [loopGuard, mistakeLimit]],
    ['mistake-limit loaded first', [mistakeLimit, loopGuard]],
  ])('a continue at its own limit starts loop-guard over too, so the loop does not escalate a few steps later (%s)', async (_order, plugins) => {
    const asked: [MistakeLimitState['cause'], number | undefined][] = []
    h.root.on('mistake-limit/reached', (_agent, state) => {
      asked.push([state.cause, state.step])
      return { action: 'continue', guidance: 'Find the right paths first.' }
    })
    for (const plugin of plugins) await h.load(plugin, plugin === mistakeLimit ? { limit: 3 } : {})
    const agent = await h.createAgent()
    // Two failing calls in turn: every step is a mistake, and each call fails the same way each time.
    h.scripted.push(...repeat(9, (i) => tools(call('read_file', { path: i % 2 ? 'missing-b.txt' : 'missing-a.txt' }))), done())
    await prompt(agent, 'go')
    // Without the reset, loop-guard's A-B cycle (4 repeated calls) escalated at step 6.
    expect(asked).toEqual([['tool-failures', 3], ['tool-failures', 6], ['tool-failures', 9]])
  })
})
