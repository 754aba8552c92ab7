import { describe, expect } from 'vitest'
import type { ToolCallReview, ToolCallVerdict } from '@goalkeeper/tools'
import { describeRecords, it } from './helpers.ts'

describe('tool/before-call in a turn', () => {
  it('records a denial in the call\'s tool/result, shows the model the reason, and the turn goes on', async ({ h }) => {
    h.root.on('tool/before-call', async (review: ToolCallReview, next: () => Promise<ToolCallVerdict>) => (review.arguments.text === 'secret'
      ? { kind: 'deny', by: 'echo-guard', reason: 'echoing secrets is not allowed' }
      : next()))
    const agent = await h.createAgent()
    h.scripted.push(
      { toolCalls: [{ name: 'echo', arguments: { text: 'secret' } }, { name: 'echo', arguments: { text: 'fine' } }] },
      { text: 'understood' },
    )
    agent.send({ content: 'work' })
    await agent.whenIdle()
    const records = h.records(agent)
    expect(describeRecords(records)).toEqual([
      'input/queued work', 'turn/start 1', 'user/message work',
      'step/start 1.1', 'assistant/message',
      'tool/call echo', 'tool/result DENIED', 'tool/call echo', 'tool/result ok',
      'step/end 1.1',
      'step/start 1.2', 'assistant/message', 'step/end 1.2',
      'turn/end 1 completed',
    ])
    const [denied, allowed] = records.filter((r) => r.type === 'tool/result').map((r) => r.data)
    const reason = 'The call was denied by echo-guard: echoing secrets is not allowed'
    expect(denied).toMatchObject({ ok: false, content: reason, error: { code: 'DENIED' }, denied: { by: 'echo-guard', reason: 'echoing secrets is not allowed' } })
    expect(allowed).toEqual({ turn: 1, step: 1, callId: expect.any(String), ok: true, content: 'fine' })
    expect(h.scripted.requests[1].messages.filter((m) => m.role === 'tool')).toMatchObject([
      { role: 'tool', name: 'echo', ok: false, content: reason },
      { role: 'tool', name: 'echo', ok: true, content: 'fine' },
    ])
  })

  it('records the original arguments in tool/call and each rewrite in tool/result', async ({ h }) => {
    h.root.on('tool/before-call', async (review: ToolCallReview, next: () => Promise<ToolCallVerdict>) => {
      review.rewrite({ text: String(review.arguments.text).toUpperCase() }, 'shout', 'louder')
      return next()
    })
    const agent = await h.createAgent()
    h.scripted.push({ toolCalls: [{ name: 'echo', arguments: { text: 'hi' } }] }, { text: 'ok' })
    agent.send({ content: 'work' })
    await agent.whenIdle()
    await h.root.sessions.flush(agent.session)
    const records = h.readFile(agent)
    expect(records.find((r) => r.type === 'tool/call')?.data).toMatchObject({ name: 'echo', arguments: '{"text":"hi"}' })
    expect(records.find((r) => r.type === 'tool/result')?.data).toMatchObject({
      ok: true, content: 'HI', rewrites: [{ by: 'shout', reason: 'louder', arguments: '{"text":"HI"}' }],
    })
  })

  it('a throwing listener denies the call and the loop goes on', async ({ h }) => {
    h.root.on('tool/before-call', async () => {
      throw new Error('listener bug')
    })
    const agent = await h.createAgent()
    h.scripted.push({ toolCalls: [{ name: 'echo', arguments: { text: 'hi' } }] }, { text: 'ok' })
    agent.send({ content: 'work' })
    await agent.whenIdle()
    const result = h.records(agent).find((r) => r.type === 'tool/result')?.data
    expect(result).toMatchObject({ ok: false, error: { code: 'DENIED' }, denied: { by: 'tools', reason: 'a tool/before-call listener failed: listener bug' } })
    expect(h.records(agent).at(-1)?.data).toMatchObject({ outcome: { kind: 'completed' } })
    expect(h.errors().join('\n')).toContain('listener bug')
  })
})
