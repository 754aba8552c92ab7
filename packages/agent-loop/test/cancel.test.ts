import { describe, expect } from 'vitest'
import type { ToolCallContext } from '@goalkeeper/tools'
import { describeRecords, it, nextEvent, timeline } from './helpers.ts'

describe('cancel', () => {

  it('on an idle agent with an empty inbox is a no-op and emits nothing', async ({ h }) => {
    const agent = await h.createAgent()
    const events = h.events(['agent/cancel-requested', 'agent/status', 'session/event'])
    expect(agent.cancel('user')).toBe(false)
    expect(agent.cancel('policy', { turn: 1 })).toBe(false)
    expect(events).toEqual([])
  })

  it('while queued removes the inputs before any turn', async ({ h }) => {
    const agent = await h.createAgent()
    const events = h.events(['agent/cancel-requested', 'agent/status', 'session/event'])
    const message = agent.send({ content: 'never' })
    expect(agent.cancel('user')).toBe(true)
    await agent.whenIdle()
    expect(timeline(events)).toEqual(['input/queued never', 'agent/cancel-requested', 'input/cancelled'])
    expect(h.records(agent).at(-1)!.data).toEqual({ messageId: message.id, reason: 'user' })
    expect(h.scripted.requests).toEqual([])
  })

  it('while the batch is under decision rejects the batch and ignores the decision', async ({ h }) => {
    const agent = await h.createAgent()
    let release!: () => void
    const held = new Promise<void>((resolve) => { release = resolve })
    const deciding = nextEvent(h.root, 'agent/prompt-submit')
    h.root.on('agent/prompt-submit', async (_agent, _submission, next) => {
      await held
      return next()
    })
    const message = agent.send({ content: 'late' })
    await deciding
    expect(agent.status).toBe('running')
    expect(agent.cancel('user')).toBe(true)
    expect(h.records(agent).at(-1)).toMatchObject({ type: 'input/rejected', data: { messageId: message.id, reason: 'cancel:user' } })
    release()
    await agent.whenIdle()
    expect(describeRecords(h.records(agent))).toEqual(['input/queued late', 'input/rejected'])
    expect(agent.status).toBe('idle')
  })

  it('while the model streams aborts the turn with the reason as cause', async ({ h }) => {
    const agent = await h.createAgent()
    h.scripted.push({ kind: 'hang', text: 'I will now think forever' })
    const events = h.events(['agent/cancel-requested', 'agent/turn-end', 'agent/error', 'agent/step-end'])
    const streaming = nextEvent(h.root, 'agent/text-delta')
    agent.send({ content: 'go' })
    await streaming
    expect(agent.cancel('user')).toBe(true)
    await agent.whenIdle()
    expect(timeline(events)).toEqual(['agent/cancel-requested', 'agent/turn-end aborted'])
    expect(describeRecords(h.records(agent))).toEqual([
      'input/queued go', 'turn/start 1', 'user/message go', 'step/start 1.1', 'assistant/message', 'step/end 1.1', 'turn/end 1 aborted',
    ])
    expect(h.records(agent).at(-1)!.data).toEqual({ turn: 1, outcome: { kind: 'aborted', cause: 'user' } })
    const partial = (h.records(agent).find((r) => r.type === 'assistant/message')!.data as any).text
    expect('I will now think forever'.startsWith(partial) && partial.length > 0).toBe(true)
  })

  it('while a tool runs aborts it through its signal and closes every call with a result', async ({ h }) => {
    const agent = await h.createAgent()
    h.scripted.push({ toolCalls: [{ name: 'wait' }, { name: 'echo', arguments: { text: 'never' } }] })
    const waiting = nextEvent(h.root, 'test/waiting')
    agent.send({ content: 'go' })
    const [call] = await waiting as [ToolCallContext]
    expect(agent.cancel('parent')).toBe(true)
    expect(call.signal.aborted).toBe(true)
    await agent.whenIdle()
    expect(describeRecords(h.records(agent))).toEqual([
      'input/queued go', 'turn/start 1', 'user/message go', 'step/start 1.1', 'assistant/message',
      'tool/call wait', 'tool/result ABORTED', 'tool/call echo', 'tool/result ABORTED', 'step/end 1.1', 'turn/end 1 aborted',
    ])
    expect(h.records(agent).at(-1)!.data).toMatchObject({ outcome: { kind: 'aborted', cause: 'parent' } })
  })

  it('keeps replacement work that an agent/cancel-requested listener queues', async ({ h }) => {
    const agent = await h.createAgent()
    h.scripted.push({ kind: 'hang' }, { text: 'replaced' })
    h.root.once('agent/cancel-requested', (target) => { target.send({ content: 'replacement' }) })
    const started = nextEvent(h.root, 'agent/turn-start')
    agent.send({ content: 'first' })
    await started
    const old = agent.send({ content: 'old' })
    expect(agent.cancel('user')).toBe(true)
    await agent.whenIdle()
    expect(h.records(agent).find((r) => r.type === 'input/cancelled')!.data).toEqual({ messageId: old.id, reason: 'user' })
    expect(describeRecords(h.records(agent)).filter((r) => r.startsWith('turn/') || r.startsWith('user/'))).toEqual([
      'turn/start 1', 'user/message first', 'turn/end 1 aborted', 'turn/start 2', 'user/message replacement', 'turn/end 2 completed',
    ])
  })

  it('policy cancel of a turn keeps the inbox and only acts while that turn is open', async ({ h }) => {
    const agent = await h.createAgent()
    h.scripted.push({ kind: 'hang' }, { text: 'next one' })
    const started = nextEvent(h.root, 'agent/turn-start')
    agent.send({ content: 'first' })
    const [, turn] = await started
    agent.send({ content: 'queued' })
    const events = h.events(['agent/cancel-requested'])
    expect(agent.cancel('policy', { turn: turn + 1 })).toBe(false)
    expect(events).toEqual([])
    expect(agent.cancel('policy', { turn })).toBe(true)
    expect(agent.cancel('policy', { turn })).toBe(false)
    await agent.whenIdle()
    expect(events.map((e) => e.args[1])).toEqual(['policy'])
    expect(h.records(agent).some((r) => r.type === 'input/cancelled')).toBe(false)
    expect(describeRecords(h.records(agent)).filter((r) => r.startsWith('turn/'))).toEqual([
      'turn/start 1', 'turn/end 1 aborted', 'turn/start 2', 'turn/end 2 completed',
    ])
    expect(h.records(agent).find((r) => r.type === 'turn/end')!.data).toMatchObject({ outcome: { kind: 'aborted', cause: 'policy' } })
  })

  it('from a step-end listener stops the turn before the next model call', async ({ h }) => {
    const agent = await h.createAgent()
    h.scripted.push({ toolCalls: [{ name: 'echo', arguments: { text: 'x' } }] })
    h.root.on('agent/step-end', (target, turn) => { target.cancel('policy', { turn }) })
    agent.send({ content: 'go' })
    await agent.whenIdle()
    expect(h.scripted.requests).toHaveLength(1)
    expect(h.records(agent).at(-1)!.data).toMatchObject({ outcome: { kind: 'aborted', cause: 'policy' } })
  })
})
