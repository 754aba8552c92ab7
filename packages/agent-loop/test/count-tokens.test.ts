// The compaction decision with a provider that counts tokens itself (`countTokens`): its figure decides
// near the threshold, the estimate decides far below it and when the count fails.
import { describe, expect } from 'vitest'
import type { Context } from 'cordis'
import type { ModelProvider, ModelRequest } from '@goalkeeper/model'
import { isRecordOf } from '@goalkeeper/session'
import { estimateRequest } from '@goalkeeper/agent-loop'
import type { Harness } from '@goalkeeper/test-kit'
import { it } from './helpers.ts'

const WINDOW = 1000

/** The scripted provider under another name, with a window and a token count of the test's choosing. */
function counting(h: Harness, count: (request: ModelRequest) => Promise<number | undefined>) {
  const asked: ModelRequest[] = []
  const provider: ModelProvider = {
    stream: (request, signal) => h.scripted.stream(request, signal),
    contextWindow: () => WINDOW,
    countTokens: async (request) => {
      asked.push(request)
      return count(request)
    },
  }
  const plugin = { name: 'counting-model', inject: ['models'], apply: (ctx: Context) => { ctx.models.register('counting', provider) } }
  return { plugin, asked }
}

const compacted = (h: Harness, agent: { session: unknown }) => h.records(agent as never).filter((record) => isRecordOf(record, 'context/compacted'))

describe('compaction with a provider token count', () => {
  it('a count under the threshold keeps the history whole although the estimate is over it', async ({ h }) => {
    const { plugin, asked } = counting(h, async () => 100)
    await h.load(plugin)
    h.scripted.push({ text: 'done' })
    const agent = await h.createAgent({ model: 'counting' })
    agent.send({ content: 'y'.repeat(4000) })
    await agent.whenIdle()
    expect(estimateRequest(asked[0])).toBeGreaterThan(0.8 * WINDOW)
    expect(asked).toHaveLength(1)
    expect(compacted(h, agent)).toEqual([])
  })

  it('a count over the threshold compacts although the estimate is under it', async ({ h }) => {
    const { plugin, asked } = counting(h, async () => 950)
    await h.load(plugin)
    // Two exchanges of history, then a request the estimate puts between half the limit and the limit.
    h.scripted.push({ text: 'first answer ' + 'a'.repeat(600) }, { text: 'summary of the first exchange' }, { text: 'second answer' })
    const agent = await h.createAgent({ model: 'counting' })
    agent.send({ content: 'first ' + 'q'.repeat(600) })
    await agent.whenIdle()
    agent.send({ content: 'second question' })
    await agent.whenIdle()
    const estimate = estimateRequest(asked.at(-1)!)
    expect(estimate).toBeGreaterThan(0.4 * WINDOW)
    expect(estimate).toBeLessThan(0.8 * WINDOW)
    const [record] = compacted(h, agent)
    expect(record?.data).toMatchObject({ reason: 'threshold', tokensBefore: 950 })
  })

  it('far below the threshold the provider is not asked; a failed count leaves the estimate', async ({ h }) => {
    const { plugin, asked } = counting(h, async () => { throw new Error('count endpoint down') })
    await h.load(plugin)
    h.scripted.push({ text: 'short' }, { text: 'long' })
    const agent = await h.createAgent({ model: 'counting' })
    agent.send({ content: 'hi' })
    await agent.whenIdle()
    expect(asked).toEqual([])
    agent.send({ content: 'z'.repeat(2000) })
    await agent.whenIdle()
    // Asked, failed: the estimate (under the threshold) decided, the turn went on.
    expect(asked).toHaveLength(1)
    expect(compacted(h, agent)).toEqual([])
    expect(h.records(agent).filter((record) => record.type === 'turn/end').map((record) => (record.data as any).outcome.kind)).toEqual(['completed', 'completed'])
  })
})
