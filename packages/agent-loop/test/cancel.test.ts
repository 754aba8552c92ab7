import { describe, expect } from 'vitest'
import type { ToolCallContext } from '@goalkeeper/tools'
import { describeRecords, it, nextEvent, timeline } from './helpers.ts'
import { checkLog } from './invariants.ts'

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

  it('from an agent/status running listener rejects the batch just taken, which prompt-submit never sees', async ({ h }) => {
    const agent = await h.createAgent()
    const events = h.events(['agent/status', 'agent/cancel-requested', 'agent/prompt-submit'])
    h.root.once('agent/status', (target, status) => { if (status === 'running') target.cancel('user') })
    const message = agent.send({ content: 'taken' })
    await agent.whenIdle()
    expect(timeline(events)).toEqual(['agent/status running', 'agent/cancel-requested', 'agent/status idle'])
    expect(describeRecords(h.records(agent))).toEqual(['input/queued taken', 'input/rejected'])
    expect(h.records(agent).at(-1)!.data).toEqual({ messageId: message.id, reason: 'cancel:user' })
  })

  it('after the decision but before the turn opens (from agent/admit) is effective and opens no turn', async ({ h }) => {
    const agent = await h.createAgent()
    let effective: boolean | undefined
    h.root.once('agent/admit', (target) => { effective = target.cancel('user') })
    const events = h.events(['agent/cancel-requested', 'agent/turn-start'])
    const message = agent.send({ content: 'stop me' })
    await agent.whenIdle()
    expect(effective).toBe(true)
    expect(timeline(events)).toEqual(['agent/cancel-requested'])
    expect(describeRecords(h.records(agent))).toEqual(['input/queued stop me', 'input/rejected'])
    expect(h.records(agent).at(-1)!.data).toEqual({ messageId: message.id, reason: 'cancel:user' })
    expect(h.scripted.requests).toEqual([])
  })

  it('while dropped messages are being recorded rejects the admitted rest of the batch, each message once', async ({ h }) => {
    const agent = await h.createAgent()
    h.root.on('agent/prompt-submit', async (_agent, submission, next) => {
      submission.messages = submission.messages.filter((m) => m.content[0].text !== 'drop')
      return next()
    })
    let effective: boolean | undefined
    h.root.on('session/event', (_session, record) => {
      if (record.type === 'input/rejected' && effective === undefined) effective = agent.cancel('user')
    })
    const dropped = agent.send({ content: 'drop' })
    const kept = agent.send({ content: 'keep' })
    await agent.whenIdle()
    expect(effective).toBe(true)
    expect(h.records(agent).filter((r) => r.type === 'input/rejected').map((r) => r.data)).toEqual([
      { messageId: dropped.id, reason: 'dropped' }, { messageId: kept.id, reason: 'cancel:user' },
    ])
    expect(h.records(agent).some((r) => r.type === 'turn/start')).toBe(false)
    expect(checkLog(h.records(agent))).toEqual([])
  })

  it('from an agent/error listener aborts the ending turn, as its true result says', async ({ h }) => {
    const agent = await h.createAgent()
    h.scripted.push({ kind: 'error', code: 'SERVER', message: 'down' })
    const events = h.events(['agent/error', 'agent/cancel-requested', 'agent/turn-end'])
    let effective: boolean | undefined
    h.root.once('agent/error', (target) => { effective = target.cancel('user') })
    agent.send({ content: 'go' })
    await agent.whenIdle()
    expect(effective).toBe(true)
    expect(timeline(events)).toEqual(['agent/error SERVER', 'agent/cancel-requested', 'agent/turn-end aborted'])
    expect(h.records(agent).at(-1)!.data).toEqual({ turn: 1, outcome: { kind: 'aborted', cause: 'user' } })
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
