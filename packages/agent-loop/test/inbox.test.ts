import { describe, expect } from 'vitest'
import type { UserMessage } from '@goalkeeper/session'
import { describeRecords, it, timeline } from './helpers.ts'

describe('inbox, batches and admission', () => {

  it('send records the message, emits agent/queued synchronously and returns the recorded message', async ({ h }) => {
    const agent = await h.createAgent()
    const queued: UserMessage[] = []
    const seen: unknown[] = []
    h.root.on('agent/queued', (target, message) => {
      queued.push(message)
      seen.push(target.session.records.at(-1), target.queued.at(-1))
    })
    h.scripted.push({ text: 'ok' })
    const message = agent.send({ content: 'hi' })
    expect(queued).toEqual([message])
    expect(queued[0]).toBe(message)
    // Already recorded and in the inbox when listeners hear of it.
    expect(seen).toEqual([expect.objectContaining({ type: 'input/queued', data: { message } }), message])
    expect(message).toEqual({ id: expect.any(String), content: [{ type: 'text', text: 'hi' }], source: { kind: 'human' } })
    expect(h.records(agent).at(-1)).toMatchObject({ type: 'input/queued', data: { message } })
    expect(agent.queued).toEqual([message])
    expect(agent.status).toBe('idle')
    await agent.whenIdle()
    expect(agent.queued).toEqual([])
  })

  it('a message is in the inbox as soon as its input/queued record exists, so a cancel there removes it', async ({ h }) => {
    const agent = await h.createAgent()
    let effective: boolean | undefined
    h.root.on('session/event', (_session, record) => {
      if (record.type === 'input/queued' && effective === undefined) effective = agent.cancel('user')
    })
    const message = agent.send({ content: 'cancelled at once' })
    await agent.whenIdle()
    expect(effective).toBe(true)
    expect(describeRecords(h.records(agent))).toEqual(['input/queued cancelled at once', 'input/cancelled'])
    expect(h.records(agent).at(-1)!.data).toEqual({ messageId: message.id, reason: 'user' })
    expect(h.scripted.requests).toEqual([])
  })

  it('a send that cannot be recorded leaves neither inbox nor id taken', async ({ h }) => {
    const session = await h.root.sessions.create({ cwd: h.workspace })
    const agent = await h.createAgent({ session })
    await h.root.sessions.close(session)
    expect(() => agent.send({ id: 'm1', content: 'lost' })).toThrow(expect.objectContaining({ code: 'SESSION_CLOSED' }))
    expect(agent.queued).toEqual([])
    expect(agent.wake()).toBe(false)
  })

  it('refuses bad input with a clear error and records nothing', async ({ h }) => {
    const agent = await h.createAgent()
    const before = h.records(agent).length
    expect(() => agent.send({ content: '' })).toThrow(/non-empty content/)
    expect(() => agent.send({ content: [{ type: 'image', data: 'x' }] as any })).toThrow(/content block 0/)
    expect(() => agent.send({ content: 'x', source: { kind: 'goal' } as any })).toThrow(/invalid message source/)
    agent.send({ id: 'm1', content: 'x' })
    expect(() => agent.send({ id: 'm1', content: 'again' })).toThrow(/already used/)
    expect(() => agent.cancel('whatever' as any)).toThrow(/cancel reason/)
    expect(h.records(agent).length).toBe(before + 1)
    agent.cancel('user')
    await agent.whenIdle()
  })

  it('two sends in the same tick share one batch and one turn', async ({ h }) => {
    const agent = await h.createAgent()
    const events = h.events(['agent/prompt-submit'])
    h.scripted.push({ text: 'both' })
    agent.send({ content: 'a' })
    // A microtask later is still the same tick: the batch is taken in a later macrotask.
    await Promise.resolve()
    agent.send({ content: 'b' })
    await agent.whenIdle()
    expect(events).toHaveLength(1)
    expect((events[0].args[1] as any).messages.map((m: UserMessage) => m.content[0].text)).toEqual(['a', 'b'])
    expect(describeRecords(h.records(agent))).toEqual([
      'input/queued a', 'input/queued b', 'turn/start 1', 'user/message a', 'user/message b',
      'step/start 1.1', 'assistant/message', 'step/end 1.1', 'turn/end 1 completed',
    ])
    expect(h.scripted.requests).toHaveLength(1)
    expect(h.scripted.requests[0].messages.map((m: any) => m.content[0].text)).toEqual(['a', 'b'])
  })

  it('a human message queued during a turn runs as the next turn', async ({ h }) => {
    const agent = await h.createAgent()
    const events = h.events(['agent/status', 'agent/prompt-submit', 'agent/turn-end'])
    h.scripted.push(() => {
      agent.send({ content: 'second' })
      return { text: 'one' }
    }, { text: 'two' })
    agent.send({ content: 'first' })
    await agent.whenIdle()
    expect(timeline(events)).toEqual([
      'agent/status running', 'agent/prompt-submit', 'agent/turn-end completed',
      'agent/prompt-submit', 'agent/turn-end completed', 'agent/status idle',
    ])
    expect(describeRecords(h.records(agent))).toEqual([
      'input/queued first', 'turn/start 1', 'user/message first', 'step/start 1.1', 'input/queued second',
      'assistant/message', 'step/end 1.1', 'turn/end 1 completed',
      'turn/start 2', 'user/message second', 'step/start 2.1', 'assistant/message', 'step/end 2.1', 'turn/end 2 completed',
    ])
  })

  it('a decision that opens no turn still ends in idle', async ({ h }) => {
    const agent = await h.createAgent()
    h.root.on('agent/prompt-submit', async () => ({ kind: 'submit', messages: [] }))
    const events = h.events(['agent/status', 'agent/turn-start'])
    agent.send({ content: 'nothing' })
    await agent.whenIdle()
    expect(timeline(events)).toEqual(['agent/status running', 'agent/status idle'])
    expect(agent.status).toBe('idle')
    expect(describeRecords(h.records(agent))).toEqual(['input/queued nothing', 'input/rejected'])
    expect(h.records(agent).at(-1)!.data).toMatchObject({ reason: 'dropped' })
  })

  it('listeners drop messages by editing the submission or filtering the decision', async ({ h }) => {
    const agent = await h.createAgent()
    h.root.on('agent/prompt-submit', async (_agent, submission, next) => {
      submission.messages = submission.messages.filter((m) => m.content[0].text !== 'b')
      return next()
    })
    h.root.on('agent/prompt-submit', async (_agent, _submission, next) => {
      const decision = await next()
      return decision.kind === 'submit' ? { ...decision, messages: decision.messages.filter((m) => m.content[0].text !== 'c') } : decision
    })
    h.scripted.push({ text: 'only a' })
    agent.send({ content: 'a' })
    agent.send({ content: 'b' })
    agent.send({ content: 'c' })
    await agent.whenIdle()
    const rejected = h.records(agent).filter((r) => r.type === 'input/rejected').map((r) => r.data)
    const ids = Object.fromEntries(h.records(agent).filter((r) => r.type === 'input/queued').map((r: any) => [r.data.message.content[0].text, r.data.message.id]))
    expect(rejected).toEqual([{ messageId: ids.b, reason: 'dropped' }, { messageId: ids.c, reason: 'dropped' }])
    expect(h.records(agent).filter((r) => r.type === 'user/message').map((r: any) => r.data.id)).toEqual([ids.a])
  })

  it('a reject decision rejects the whole batch with its reason and opens no turn', async ({ h }) => {
    const agent = await h.createAgent()
    h.root.on('agent/prompt-submit', async () => ({ kind: 'reject', reason: 'quiet hours' }))
    const errors = h.events(['agent/error'])
    agent.send({ content: 'a' })
    agent.send({ content: 'b' })
    await agent.whenIdle()
    expect(h.records(agent).filter((r) => r.type === 'input/rejected').map((r: any) => r.data.reason)).toEqual(['quiet hours', 'quiet hours'])
    expect(h.records(agent).some((r) => r.type === 'turn/start')).toBe(false)
    expect(errors).toEqual([])
    expect(agent.status).toBe('idle')
  })

  it('a throwing listener rejects the batch, reports agent/error and the loop survives', async ({ h }) => {
    const agent = await h.createAgent()
    const dispose = h.root.on('agent/prompt-submit', async () => { throw new Error('listener broke') })
    const errors = h.events(['agent/error'])
    agent.send({ content: 'a' })
    await agent.whenIdle()
    expect(h.records(agent).at(-1)).toMatchObject({ type: 'input/rejected', data: { reason: 'error' } })
    expect(errors).toHaveLength(1)
    expect(errors[0].args[2]).toMatchObject({ code: 'PROMPT_SUBMIT_FAILED', message: expect.stringContaining('listener broke') })

    dispose()
    h.scripted.push({ text: 'fine' })
    agent.send({ content: 'again' })
    await agent.whenIdle()
    expect(h.records(agent).at(-1)).toMatchObject({ type: 'turn/end', data: { outcome: { kind: 'completed' } } })
  })

  it.for<[string, (submission: any) => unknown]>([
    ['not a decision', () => 42],
    ['a message outside the batch', () => ({ kind: 'submit', messages: [{ id: 'forged', content: [{ type: 'text', text: 'x' }], source: { kind: 'human' } }] })],
    ['a rewritten source', (submission: any) => ({ kind: 'submit', messages: submission.messages.map((m: any) => ({ ...m, source: { kind: 'goal', goalId: 'g', revision: 1, round: 1 } })) })],
  ])('a decision naming %s rejects the whole batch', async ([, decide], { h }) => {
    const agent = await h.createAgent()
    h.root.on('agent/prompt-submit', (async (_agent: unknown, submission: unknown) => decide(submission as any)) as any)
    const errors = h.events(['agent/error'])
    agent.send({ content: 'a' })
    await agent.whenIdle()
    expect(describeRecords(h.records(agent))).toEqual(['input/queued a', 'input/rejected'])
    expect(errors.map((e) => (e.args[2] as any).code)).toEqual(['INVALID_DECISION'])
  })

  it('an invalid decision is reported without quoting it, since it may hold prompt text', async ({ h }) => {
    const agent = await h.createAgent()
    h.root.on('agent/prompt-submit', (async (_agent: unknown, submission: any) => submission.messages[0].content[0].text) as any)
    const errors = h.events(['agent/error'])
    agent.send({ content: 'token sk-private-42' })
    await agent.whenIdle()
    expect(errors.map((e) => (e.args[2] as any).code)).toEqual(['INVALID_DECISION'])
    expect((errors[0].args[2] as any).message).toMatch(/string/)
    for (const text of [(errors[0].args[2] as any).message, ...h.logs.map((l) => l.text)]) expect(text).not.toContain('sk-private-42')
  })

  it('agent/admit vetoes single messages right before the turn opens; a throwing listener vetoes too', async ({ h }) => {
    const agent = await h.createAgent()
    h.root.on('agent/admit', (_agent, message) => message.content[0].text === 'veto me' ? 'not today' : undefined)
    h.root.on('agent/admit', (_agent, message) => { if (message.content[0].text === 'break') throw new Error('admit broke') })
    const errors = h.events(['agent/error'])
    h.scripted.push({ text: 'ok' })
    agent.send({ content: 'veto me' })
    agent.send({ content: 'keep me' })
    agent.send({ content: 'break' })
    await agent.whenIdle()
    expect(describeRecords(h.records(agent)).slice(0, 7)).toEqual([
      'input/queued veto me', 'input/queued keep me', 'input/queued break',
      'input/rejected', 'input/rejected', 'turn/start 1', 'user/message keep me',
    ])
    expect(h.records(agent).filter((r) => r.type === 'input/rejected').map((r: any) => r.data.reason))
      .toEqual(['not today', expect.stringContaining('admit broke')])
    expect(errors.map((e) => (e.args[2] as any).code)).toEqual(['ADMIT_FAILED'])
  })

  it('a decision may return equal copies of batch messages', async ({ h }) => {
    const agent = await h.createAgent()
    h.root.on('agent/prompt-submit', async (_agent, submission) => ({ kind: 'submit', messages: submission.messages.map((m) => structuredClone(m)) }))
    h.scripted.push({ text: 'ok' })
    agent.send({ content: 'a', source: { kind: 'goal', goalId: 'g', revision: 2, round: 1 } })
    await agent.whenIdle()
    expect(h.records(agent).filter((r) => r.type === 'user/message')).toHaveLength(1)
  })
})
