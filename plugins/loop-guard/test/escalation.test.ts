import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { PolicyEscalation } from '@goalkeeper/policy'
import * as loopGuard from '@goalkeeper/loop-guard'
import { deferred, done, harnessWith, outcomes, pluginMessages, prompt, readA, repeat, userTexts, type Harness } from '@goalkeeper/test-kit'

let h: Harness
beforeEach(async () => { h = await harnessWith({ 'a.txt': 'alpha\n' }) })
afterEach(() => h.dispose())

describe('loop-guard escalation (policy/escalate)', () => {
  it('a continue verdict steers its guidance to the model and resets the loop state', async () => {
    const escalations: PolicyEscalation[] = []
    h.root.on('policy/escalate', (_agent, escalation) => {
      escalations.push(escalation)
      return { action: 'continue', guidance: 'Try reading b.txt instead.' }
    })
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    // 5 repeats escalate; after the reset the next 2 identical calls are below the soft threshold again.
    h.scripted.push(...repeat(7, readA), done())
    await prompt(agent, 'go')

    expect(escalations).toEqual([{
      source: 'loop-guard', code: 'repeated-tool-call', turn: 1,
      message: '`read_file` {"path":"a.txt"} was called 5 times in a row with the same arguments and returned the same result each time',
    }])
    expect(userTexts(h.scripted.requests[5]).at(-1)).toBe('Try reading b.txt instead.')
    expect(pluginMessages(h.records(agent), 'loop-guard')).toHaveLength(2)
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'completed' }])
  })

  it('a continue verdict without guidance steers the recovery hint', async () => {
    h.root.on('policy/escalate', async () => ({ action: 'continue' as const }))
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    h.scripted.push(...repeat(5, readA), done())
    await prompt(agent, 'go')
    expect(userTexts(h.scripted.requests[5]).at(-1)).toMatch(/^Loop guard: `read_file` \{"path":"a.txt"\} was called 5 times in a row/)
  })

  it('a stop verdict stops with its reason in the message', async () => {
    h.root.on('policy/escalate', () => ({ action: 'stop', reason: 'operator says no' }))
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    h.scripted.push(...repeat(5, readA), done())
    await prompt(agent, 'go')
    expect(pluginMessages(h.records(agent), 'loop-guard').at(-1)).toContain('each time. Decision: operator says no. The session is kept')
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'aborted', cause: 'policy' }])
  })

  it('skips listeners that answer nothing, including async ones, and uses the first verdict', async () => {
    h.root.on('policy/escalate', async () => undefined)
    h.root.on('policy/escalate', () => ({ action: 'continue', guidance: 'second listener rules' }))
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    h.scripted.push(...repeat(5, readA), done())
    await prompt(agent, 'go')
    expect(userTexts(h.scripted.requests[5]).at(-1)).toBe('second listener rules')
  })

  it('stops on its own when a listener throws, answers garbage or never answers', async () => {
    await h.load(loopGuard, { escalationTimeoutMs: 50 })
    const cases: [string, () => unknown][] = [
      ['throws', () => { throw new Error('boom') }],
      ['garbage', () => ({ action: 'maybe' })],
      ['hangs', () => new Promise(() => {})],
    ]
    for (const [label, listener] of cases) {
      const off = h.root.on('policy/escalate', listener as any)
      const agent = await h.createAgent()
      h.scripted.reset([...repeat(5, readA), done()])
      await prompt(agent, label)
      expect(outcomes(h.records(agent)), label).toEqual([{ kind: 'aborted', cause: 'policy' }])
      off()
    }
    expect(h.logs.filter((l) => l.name === 'loop-guard' && l.level === 'warn').map((l) => l.text)).toEqual([
      expect.stringContaining('a policy/escalate listener failed; stopping: boom'),
      expect.stringContaining('ignoring a malformed policy/escalate verdict'),
      expect.stringContaining('no policy/escalate verdict within 50 ms'),
    ])
  })

  it('does nothing more when the turn is cancelled while the verdict is pending, and leaves no streak at the hard threshold', async () => {
    const asked = deferred()
    let calls = 0
    h.root.on('policy/escalate', () => {
      if (++calls > 1) return { action: 'stop' }
      asked.resolve()
      return new Promise(() => {})
    })
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    h.scripted.push(...repeat(5, readA), done())
    agent.send({ content: 'go' })
    await asked.promise
    agent.cancel('user')
    await agent.whenIdle()
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'aborted', cause: 'user' }])
    expect(pluginMessages(h.records(agent), 'loop-guard')).toHaveLength(1)
    // Not human input, so only the settled escalation can have reset the streak.
    h.scripted.reset([readA(), done('read once')])
    await prompt(agent, 'automation', { kind: 'plugin', name: 'scheduler' })
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'aborted', cause: 'user' }, { kind: 'completed' }])
    expect(calls).toBe(1)
  })
})
