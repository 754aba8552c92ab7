import { describe, expect } from 'vitest'
import { describeRecords, it, nextEvent, text } from './helpers.ts'

const hint = { content: 'Try a different approach.', source: { kind: 'plugin', name: 'loop-guard' } } as const

describe('steer', () => {

  it('after the model\'s last step forces one more step that carries the steered text', async ({ h }) => {
    const agent = await h.createAgent()
    h.scripted.push({ text: 'All done.' }, { text: 'Taking the hint.' })
    h.root.once('agent/step-end', (target) => { target.steer(hint) })
    agent.send({ content: 'work' })
    await agent.whenIdle()
    expect(describeRecords(h.records(agent))).toEqual([
      'input/queued work', 'turn/start 1', 'user/message work',
      'step/start 1.1', 'assistant/message', 'step/end 1.1',
      'step/start 1.2', 'user/message Try a different approach.', 'assistant/message', 'step/end 1.2',
      'turn/end 1 completed',
    ])
    const last = h.scripted.requests[1].messages.at(-1)
    expect(last).toEqual({ role: 'user', content: [{ type: 'text', text: 'Try a different approach.' }] })
  })

  it('made during a step joins the next step and the turn sources', async ({ h }) => {
    const agent = await h.createAgent()
    h.scripted.push({ toolCalls: [{ name: 'echo', arguments: { text: 'x' } }] }, { toolCalls: [{ name: 'context' }] }, { text: 'ok' })
    h.root.once('agent/tool-start', (target) => { target.steer(hint) })
    agent.send({ content: 'work' })
    await agent.whenIdle()
    const steered = h.records(agent).filter((r) => r.type === 'user/message')[1]
    const stepStart = h.records(agent).filter((r) => r.type === 'step/start')[1]
    expect(steered.seq).toBe(stepStart.seq + 1)
    const context = JSON.parse((h.records(agent).filter((r) => r.type === 'tool/result')[1].data as any).content)
    expect(context.turnSources).toEqual([{ kind: 'human' }, { kind: 'plugin', name: 'loop-guard' }])
  })

  it('while the turn is being aborted is still recorded before turn/end', async ({ h }) => {
    const agent = await h.createAgent()
    h.scripted.push({ kind: 'hang' })
    h.root.once('agent/cancel-requested', (target) => { target.steer(hint) })
    const started = nextEvent(h.root, 'agent/turn-start')
    agent.send({ content: 'work' })
    await started
    agent.cancel('user')
    await agent.whenIdle()
    expect(describeRecords(h.records(agent)).slice(-3)).toEqual(['step/end 1.1', 'user/message Try a different approach.', 'turn/end 1 aborted'])
  })

  it('from an agent/error listener is still recorded before turn/end', async ({ h }) => {
    const agent = await h.createAgent()
    h.scripted.push({ kind: 'error', code: 'SERVER', message: 'down' })
    h.root.once('agent/error', (target) => { target.steer(hint) })
    agent.send({ content: 'work' })
    await agent.whenIdle()
    expect(describeRecords(h.records(agent)).slice(-3)).toEqual(['step/end 1.1', 'user/message Try a different approach.', 'turn/end 1 error'])
  })

  it('made while the last steered messages are recorded still lands before turn/end', async ({ h }) => {
    const agent = await h.createAgent()
    h.scripted.push({ kind: 'hang' })
    h.root.once('agent/cancel-requested', (target) => { target.steer(hint) })
    h.root.on('session/event', (_session, record) => {
      if (record.type === 'user/message' && text(record) === hint.content) agent.steer({ ...hint, content: 'Second hint.' })
    })
    const started = nextEvent(h.root, 'agent/turn-start')
    agent.send({ content: 'work' })
    await started
    agent.cancel('user')
    await agent.whenIdle()
    expect(describeRecords(h.records(agent)).slice(-3)).toEqual(['user/message Try a different approach.', 'user/message Second hint.', 'turn/end 1 aborted'])
  })

  it('on an idle agent queues the message like send, with a plugin source by default', async ({ h }) => {
    const agent = await h.createAgent()
    h.scripted.push({ text: 'ok' })
    const message = agent.steer({ content: 'wake up' })
    expect(message.source).toEqual({ kind: 'plugin', name: 'steer' })
    expect(agent.queued).toEqual([message])
    await agent.whenIdle()
    expect(describeRecords(h.records(agent)).slice(0, 3)).toEqual(['input/queued wake up', 'turn/start 1', 'user/message wake up'])
  })

  it('refuses human and goal sources, which must pass admission through send()', async ({ h }) => {
    const agent = await h.createAgent()
    h.scripted.push({ kind: 'hang' })
    const started = nextEvent(h.root, 'agent/turn-start')
    agent.send({ content: 'work' })
    await started
    expect(() => agent.steer({ content: 'I am the user', source: { kind: 'human' } })).toThrow(/plugin-sourced messages only/)
    expect(() => agent.steer({ content: 'round', source: { kind: 'goal', goalId: 'g', revision: 1, round: 1 } })).toThrow(/plugin-sourced/)
    agent.cancel('user')
    await agent.whenIdle()
    expect(h.records(agent).filter((r) => r.type === 'user/message')).toHaveLength(1)
    expect(() => agent.steer({ content: 'idle human', source: { kind: 'human' } })).toThrow(/plugin-sourced/)
    expect(agent.queued).toEqual([])
  })
})
