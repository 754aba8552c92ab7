import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import fs from 'node:fs/promises'
import path from 'node:path'
import { createHarness, type Harness } from '../../../tests/harness.ts'
import * as loopGuard from '@goalkeeper/loop-guard'
import { call, deferred, done, outcomes, pluginMessages, prompt, repeat, tools } from './util.ts'

let h: Harness
beforeEach(async () => {
  h = await createHarness()
  await fs.writeFile(path.join(h.workspace, 'a.txt'), 'alpha\n')
})
afterEach(async () => {
  vi.restoreAllMocks()
  await h.dispose()
})

const read = () => tools(call('read_file', { path: 'a.txt' }))
/** Watches timers with one distinctive delay: which were started, and which of those were cleared. */
function watchTimers(delay: number) {
  const started = new Set<unknown>()
  const cleared = new Set<unknown>()
  const realSet = globalThis.setTimeout
  const realClear = globalThis.clearTimeout
  vi.spyOn(globalThis, 'setTimeout').mockImplementation(((fn: () => void, ms?: number) => {
    const handle = realSet(fn, ms)
    if (ms === delay) started.add(handle)
    return handle
  }) as typeof setTimeout)
  vi.spyOn(globalThis, 'clearTimeout').mockImplementation((handle) => {
    if (started.has(handle)) cleared.add(handle)
    return realClear(handle)
  })
  return { started, cleared }
}

describe('loop-guard lifecycle', () => {
  it('unloads mid-turn with a verdict pending: the turn goes on, no timer or state is left, and a reload starts clean', async () => {
    const asked = deferred()
    h.root.on('policy/escalate', () => { asked.resolve(); return new Promise(() => {}) })
    const fiber = await h.load(loopGuard, { escalationTimeoutMs: 600_000 })
    const agent = await h.createAgent()
    const unloaded = deferred()
    const timers = watchTimers(600_000)
    h.scripted.push(...repeat(5, read), async () => {
      await unloaded.promise
      return read()
    }, read(), done('finished'))
    agent.send({ content: 'go' })
    await asked.promise
    expect(timers.started.size).toBe(1)
    expect(timers.cleared.size).toBe(0)
    await fiber.dispose()
    expect(timers.cleared).toEqual(timers.started)
    unloaded.resolve()
    await agent.whenIdle()

    // Unloaded: no stop, and the later repeats went unnoticed.
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'completed' }])
    expect(pluginMessages(h.records(agent), 'loop-guard')).toHaveLength(1)

    // Reloaded: counting starts from zero (a plugin-sourced turn does not reset anything by itself).
    await h.load(loopGuard, {})
    h.scripted.push(read(), read(), done('again'))
    await prompt(agent, 'again', { kind: 'plugin', name: 'scheduler' })
    expect(pluginMessages(h.records(agent), 'loop-guard')).toHaveLength(1)
  })

  it('drops an agent\'s state when the agent is disposed', async () => {
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    h.scripted.push(read(), read(), done())
    await prompt(agent, 'go')
    await agent.dispose()
    const resumed = await h.root.agents.resume(agent.id, { model: 'scripted' })
    h.scripted.push(tools(call('read_file', { path: 'a.txt' })), done())
    resumed.send({ content: 'again', source: { kind: 'plugin', name: 'scheduler' } })
    await resumed.whenIdle()
    expect(pluginMessages(h.records(resumed), 'loop-guard')).toEqual([])
  })
})

describe('loop-guard config', () => {
  it('rejects bad config with a clear message', async () => {
    await expect(h.load(loopGuard, { softThreshold: 3, hardThreshold: 3 })).rejects.toThrow(/hardThreshold must be greater than softThreshold \(3\), or 0 to disable the stop/)
    await expect(h.load(loopGuard, { softTreshold: 4 })).rejects.toThrow(/softTreshold unknown option/)
    await expect(h.load(loopGuard, { softThreshold: 1 })).rejects.toThrow(/softThreshold expected number >= 2/)
    await expect(h.load(loopGuard, { exclude: [''] })).rejects.toThrow(/exclude\[0\]/)
  })

  it('loads with no config at all', async () => {
    await h.load(loopGuard)
    const agent = await h.createAgent()
    h.scripted.push(read(), read(), read(), done())
    await prompt(agent, 'go')
    expect(pluginMessages(h.records(agent), 'loop-guard')).toHaveLength(1)
  })
})
