import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { Context, Fiber } from 'cordis'
import type { Agent } from '@goalkeeper/agent-loop'
import { awaitVerdict, isVerdict, type VerdictWait } from '@goalkeeper/policy'
import { call, deferred, done, harnessWith, tools, watchTimers, type Harness } from '@goalkeeper/test-kit'

declare module 'cordis' {
  interface Events {
    'test/ask'(agent: Agent | undefined, question: string): string | undefined | Promise<string | undefined>
  }
}

let h: Harness
let ctx: Context
let fiber: Fiber
beforeEach(async () => {
  h = await harnessWith({ 'a.txt': 'alpha\n' })
  fiber = await h.load({ name: 'asker', apply: (c: Context) => { ctx = c } })
})
afterEach(async () => {
  vi.restoreAllMocks()
  await h.dispose()
})

const never = () => new Promise<undefined>(() => {})

describe('awaitVerdict', () => {
  it('ends with the first answer of the bail, and releases its timer', async () => {
    const timers = watchTimers(600_000)
    h.root.on('test/ask', () => undefined)
    h.root.on('test/ask', async (_agent, question) => `yes to ${question}`)
    h.root.on('test/ask', () => 'too late')
    expect(await awaitVerdict(ctx, 'test/ask', [undefined, 'q'], { timeoutMs: 600_000 }).outcome).toEqual({ value: 'yes to q' })
    expect(timers.started.size).toBe(1)
    expect(timers.cleared).toEqual(timers.started)
  })

  it('ends with undefined when nobody answers, and with the error when a listener throws', async () => {
    expect(await awaitVerdict(ctx, 'test/ask', [undefined, 'q'], { timeoutMs: 600_000 }).outcome).toEqual({ value: undefined })
    const error = new Error('boom')
    h.root.on('test/ask', () => { throw error })
    expect(await awaitVerdict(ctx, 'test/ask', [undefined, 'q'], { timeoutMs: 600_000 }).outcome).toEqual({ error })
  })

  it('ends with the timeout when no answer comes in time', async () => {
    h.root.on('test/ask', never)
    expect(await awaitVerdict(ctx, 'test/ask', [undefined, 'q'], { timeoutMs: 5 }).outcome).toBe('timeout')
  })

  it('ends as abandoned on abandon(), clearing its timer; a later answer changes nothing', async () => {
    const timers = watchTimers(600_000)
    const answer = deferred<string | undefined>()
    h.root.on('test/ask', () => answer.promise)
    const wait = awaitVerdict(ctx, 'test/ask', [undefined, 'q'], { timeoutMs: 600_000 })
    wait.abandon()
    answer.resolve('yes')
    expect(await wait.outcome).toBe('abandoned')
    expect(timers.cleared).toEqual(timers.started)
  })

  it('ends as abandoned when the asking plugin unloads, and the unload clears its timer', async () => {
    const timers = watchTimers(600_000)
    h.root.on('test/ask', never)
    const wait = awaitVerdict(ctx, 'test/ask', [undefined, 'q'], { timeoutMs: 600_000 })
    expect(timers.cleared.size).toBe(0)
    await fiber.dispose()
    expect(await wait.outcome).toBe('abandoned')
    expect(timers.cleared).toEqual(timers.started)
    // Asked by a plugin that is gone: abandoned at once, without asking.
    const asked = vi.fn()
    h.root.on('test/ask', asked)
    expect(await awaitVerdict(ctx, 'test/ask', [undefined, 'q'], { timeoutMs: 600_000 }).outcome).toBe('abandoned')
    expect(asked).not.toHaveBeenCalled()
  })

  // The wait is started in agent/step-end, as a policy plugin's is. A cancel comes while the wait holds the
  // turn; a disposal waits for the turn's step-end listeners, so it is tried on a wait that does not hold it.
  const endings: [string, boolean, (agent: Agent) => unknown][] = [
    ['a cancel of the agent', true, (agent) => agent.cancel('user')],
    ['the disposal of the agent', false, async (agent) => { await agent.whenIdle(); await agent.dispose() }],
  ]
  for (const [label, hold, end] of endings) {
    it(`ends as abandoned on ${label}`, async () => {
      const started = deferred<VerdictWait<string>>()
      h.root.on('test/ask', never)
      ctx.on('agent/step-end', (agent, _turn, step) => {
        if (step !== 1) return
        const wait = awaitVerdict(ctx, 'test/ask', [agent, 'q'], { timeoutMs: 600_000, agent })
        started.resolve(wait)
        if (hold) return wait.outcome.then(() => {})
      })
      const agent = await h.createAgent()
      h.scripted.push(tools(call('read_file', { path: 'a.txt' })), done())
      agent.send({ content: 'go' })
      const wait = await started.promise
      await end(agent)
      expect(await wait.outcome).toBe('abandoned')
    })
  }
})

describe('isVerdict', () => {
  it('accepts continue and stop verdicts and nothing else', () => {
    expect(isVerdict({ action: 'continue', guidance: 'try again' })).toBe(true)
    expect(isVerdict({ action: 'stop' })).toBe(true)
    for (const value of [{ action: 'pause' }, { verdict: 'stop' }, 'stop', ['stop'], 0]) expect(isVerdict(value)).toBe(false)
  })
})
