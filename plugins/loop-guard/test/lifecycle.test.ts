import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import * as loopGuard from '@goalkeeper/loop-guard'
import { deferred, done, expectUnloadClearsTimer, harnessWith, outcomes, pluginMessages, prompt, readA, repeat, watchTimers, type Harness } from '@goalkeeper/test-kit'

let h: Harness
beforeEach(async () => { h = await harnessWith({ 'a.txt': 'alpha\n' }) })
afterEach(async () => {
  vi.restoreAllMocks()
  await h.dispose()
})

describe('loop-guard lifecycle', () => {
  it('unloads mid-turn with a verdict pending: the turn goes on, no timer or state is left, and a reload starts clean', async () => {
    const asked = deferred()
    h.root.on('policy/escalate', () => { asked.resolve(); return new Promise(() => {}) })
    const fiber = await h.load(loopGuard, { escalationTimeoutMs: 600_000 })
    const agent = await h.createAgent()
    const unloaded = deferred()
    const timers = watchTimers(600_000)
    h.scripted.push(...repeat(5, readA), async () => {
      await unloaded.promise
      return readA()
    }, readA(), done('finished'))
    agent.send({ content: 'go' })
    await asked.promise
    await expectUnloadClearsTimer(fiber, timers)
    unloaded.resolve()
    await agent.whenIdle()

    // Unloaded: no stop, and the later repeats went unnoticed.
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'completed' }])
    expect(pluginMessages(h.records(agent), 'loop-guard')).toHaveLength(1)

    // Reloaded: counting starts from zero (a plugin-sourced turn does not reset anything by itself).
    await h.load(loopGuard, {})
    h.scripted.push(readA(), readA(), done('again'))
    await prompt(agent, 'again', { kind: 'plugin', name: 'scheduler' })
    expect(pluginMessages(h.records(agent), 'loop-guard')).toHaveLength(1)
  })

  it('drops an agent\'s state when the agent is disposed', async () => {
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    h.scripted.push(readA(), readA(), done())
    await prompt(agent, 'go')
    await agent.dispose()
    const resumed = await h.root.agents.resume(agent.id, { model: 'scripted' })
    h.scripted.push(readA(), done())
    resumed.send({ content: 'again', source: { kind: 'plugin', name: 'scheduler' } })
    await resumed.whenIdle()
    expect(pluginMessages(h.records(resumed), 'loop-guard')).toEqual([])
  })
})

describe('loop-guard config', () => {
  it('rejects bad config with a clear message', async () => {
    await expect(h.load(loopGuard, ['limit: 3'])).rejects.toThrow(/expected an object of options, got an array/)
    await expect(h.load(loopGuard, { softThreshold: 3, hardThreshold: 3 })).rejects.toThrow(/hardThreshold must be greater than softThreshold \(3\), or 0 to disable the stop/)
    await expect(h.load(loopGuard, { softTreshold: 4 })).rejects.toThrow(/softTreshold unknown option/)
    await expect(h.load(loopGuard, { softThreshold: 1 })).rejects.toThrow(/softThreshold expected number >= 2/)
    await expect(h.load(loopGuard, { exclude: [''] })).rejects.toThrow(/exclude\[0\]/)
    await expect(h.load(loopGuard, { sameErrorLimit: 2 })).rejects.toThrow(/sameErrorLimit must be greater than sameErrorHint \(2\)/)
    await expect(h.load(loopGuard, { cycleHint: 4 })).rejects.toThrow(/cycleLimit must be greater than cycleHint \(4\)/)
    await expect(h.load(loopGuard, { pollHint: 30 })).rejects.toThrow(/pollLimit must be greater than pollHint \(30\)/)
    await expect(h.load(loopGuard, { maxCyclePeriod: 13 })).rejects.toThrow(/maxCyclePeriod expected number <= 12/)
    await expect(h.load(loopGuard, { argumentSimilarity: 1.5 })).rejects.toThrow(/argumentSimilarity expected number <= 1/)
    await expect(h.load(loopGuard, { volatilePatterns: ['ok', '(unclosed'] })).rejects.toThrow(/volatilePatterns\[1\] is not a valid regular expression/)
  })

  it('loads with no config at all', async () => {
    await h.load(loopGuard)
    const agent = await h.createAgent()
    h.scripted.push(readA(), readA(), readA(), done())
    await prompt(agent, 'go')
    expect(pluginMessages(h.records(agent), 'loop-guard')).toHaveLength(1)
  })
})
