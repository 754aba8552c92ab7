import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import * as mistakeLimit from '@goalkeeper/mistake-limit'
import { call, deferred, done, expectUnloadClearsTimer, harnessWith, outcomes, pluginMessages, prompt, tools, watchTimers, type Harness } from '@goalkeeper/test-kit'

let h: Harness
beforeEach(async () => { h = await harnessWith() })
afterEach(async () => {
  vi.restoreAllMocks()
  await h.dispose()
})

let missing = 0
const fail = () => tools(call('read_file', { path: `missing-${++missing}.txt` }))

describe('mistake-limit lifecycle', () => {
  it('unloads mid-decision: the turn goes on, the timer is cleared, no listener stays, and a reload starts clean', async () => {
    const asked = deferred()
    h.root.on('mistake-limit/reached', () => { asked.resolve(); return new Promise(() => {}) })
    const timers = watchTimers(600_000)

    const fiber = await h.load(mistakeLimit, { limit: 2, decisionTimeoutMs: 600_000 })
    const agent = await h.createAgent()
    h.scripted.push(fail(), fail(), fail(), fail(), done('finished'))
    agent.send({ content: 'go' })
    await asked.promise
    await expectUnloadClearsTimer(fiber, timers)
    await agent.whenIdle()

    expect(outcomes(h.records(agent))).toEqual([{ kind: 'completed' }])
    expect(pluginMessages(h.records(agent), 'mistake-limit')).toEqual([])
    expect(await h.root.serial('policy/escalate', agent, { source: 'test', code: 'x', message: 'x', turn: 1 })).toBeUndefined()

    // Reloaded: a single failure in a non-human turn is below the limit again.
    await h.load(mistakeLimit, { limit: 2 })
    h.scripted.push(fail(), done('again'))
    await prompt(agent, 'automation', { kind: 'plugin', name: 'scheduler' })
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'completed' }, { kind: 'completed' }])
  })

  it('stops awaiting a decision when the turn is cancelled meanwhile, and leaves no count at the limit', async () => {
    const asked = deferred()
    let calls = 0
    h.root.on('mistake-limit/reached', () => {
      if (++calls > 1) return { action: 'stop' }
      asked.resolve()
      return new Promise(() => {})
    })
    await h.load(mistakeLimit, { limit: 2 })
    const agent = await h.createAgent()
    h.scripted.push(fail(), fail(), done())
    agent.send({ content: 'go' })
    await asked.promise
    agent.cancel('user')
    await agent.whenIdle()
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'aborted', cause: 'user' }])
    expect(pluginMessages(h.records(agent), 'mistake-limit')).toEqual([])
    // Not human input, so only the settled decision can have reset the count.
    h.scripted.reset([fail(), done('recovered')])
    await prompt(agent, 'automation', { kind: 'plugin', name: 'scheduler' })
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'aborted', cause: 'user' }, { kind: 'completed' }])
    expect(calls).toBe(1)
  })
})

describe('mistake-limit config', () => {
  it('rejects bad config with a clear message', async () => {
    await expect(h.load(mistakeLimit, ['limit: 3'])).rejects.toThrow(/expected an object of options, got an array/)
    await expect(h.load(mistakeLimit, { limit: 0 })).rejects.toThrow(/limit expected number >= 1/)
    await expect(h.load(mistakeLimit, { limits: 3 })).rejects.toThrow(/limits unknown option \(known options: limit, /)
    await expect(h.load(mistakeLimit, { ignoreErrorCodes: 'TIMEOUT' })).rejects.toThrow(/ignoreErrorCodes/)
    await expect(h.load(mistakeLimit, { window: 4 })).rejects.toThrow(/windowLimit must be at most window \(4\), or 0 to turn the window off, but got 6/)
  })

  it('defaults to a limit of 6', async () => {
    await h.load(mistakeLimit)
    const agent = await h.createAgent()
    h.scripted.push(fail(), fail(), fail(), fail(), fail(), fail(), done())
    await prompt(agent, 'go')
    expect(h.scripted.requests).toHaveLength(6)
    expect(pluginMessages(h.records(agent), 'mistake-limit')[0]).toContain('6 consecutive steps in which every tool call failed (limit 6)')
  })
})
