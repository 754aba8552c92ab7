import { describe, expect } from 'vitest'
import { isRecordOf, type SessionRecord } from '@goalkeeper/session'
import { it } from './helpers.ts'

describe('agent/reasoning-delta', () => {

  it('streams the reasoning of a model call before its text and its assistant/message, which holds the whole of it', async ({ h }) => {
    const agent = await h.createAgent()
    const events = h.events(['agent/reasoning-delta', 'agent/text-delta', 'session/event'])
    h.scripted.push({ reasoning: 'Check the file first.', text: 'Done.' })
    agent.send({ content: 'go' })
    await agent.whenIdle()

    const deltas = events.filter((event) => event.name === 'agent/reasoning-delta')
    expect(deltas.map((event) => event.args)).toEqual([[agent, 1, 1, 'Check the file first.']])
    const order = events.map((event) => (event.name === 'session/event' ? (event.args[1] as SessionRecord).type : event.name))
    expect(order.indexOf('agent/reasoning-delta')).toBeLessThan(order.indexOf('agent/text-delta'))
    expect(order.indexOf('agent/reasoning-delta')).toBeLessThan(order.indexOf('assistant/message'))
    const message = h.records(agent).find((record) => isRecordOf(record, 'assistant/message'))
    expect(message && isRecordOf(message, 'assistant/message') && message.data.reasoning).toBe('Check the file first.')
  })

  it('is not emitted for a call without reasoning', async ({ h }) => {
    const agent = await h.createAgent()
    const events = h.events(['agent/reasoning-delta', 'agent/text-delta'])
    h.scripted.push({ text: 'Done.' })
    agent.send({ content: 'go' })
    await agent.whenIdle()
    // The text streamed, the reasoning did not: there was none.
    expect(new Set(events.map((event) => event.name))).toEqual(new Set(['agent/text-delta']))
  })
})
