import { describe, expect } from 'vitest'
import { isRecordOf, turnOutcome } from '@goalkeeper/session'
import { it } from './helpers.ts'

describe('a transport failure after output began', () => {
  it('records the partial answer as such and calls the model once more; the history leaves the partial out', async ({ h }) => {
    const agent = await h.createAgent()
    h.scripted.push(
      { kind: 'error', code: 'TRANSPORT', message: 'connection reset after output', text: 'Half an ans' },
      { text: 'The whole answer.' },
    )
    agent.send({ content: 'go' })
    await agent.whenIdle()
    const records = h.records(agent)
    expect(turnOutcome(records)).toEqual({ kind: 'completed' })
    const answers = records.filter((record) => isRecordOf(record, 'assistant/message')).map((record) => record.data)
    expect(answers).toEqual([
      { turn: 1, step: 1, text: 'Half an ans', toolCalls: [], partial: true, error: { code: 'TRANSPORT', message: 'connection reset after output' } },
      { turn: 1, step: 1, text: 'The whole answer.', toolCalls: [] },
    ])
    // The retry was the same request.
    expect(h.scripted.requests[1]).toEqual(h.scripted.requests[0])
    h.scripted.push({ text: 'next' })
    agent.send({ content: 'again' })
    await agent.whenIdle()
    expect(JSON.stringify(h.scripted.requests[2].messages)).not.toContain('Half an ans')
  })

  it('is retried only once, and not when no output came (the provider retries those)', async ({ h }) => {
    const agent = await h.createAgent()
    h.scripted.push(
      { kind: 'error', code: 'TRANSPORT', message: 'drop 1', text: 'a' },
      { kind: 'error', code: 'TRANSPORT', message: 'drop 2', text: 'b' },
      { kind: 'error', code: 'TRANSPORT', message: 'drop before output' },
    )
    agent.send({ content: 'one' })
    await agent.whenIdle()
    expect(turnOutcome(h.records(agent), 1)).toEqual({ kind: 'error', code: 'TRANSPORT', message: 'drop 2' })
    agent.send({ content: 'two' })
    await agent.whenIdle()
    expect(turnOutcome(h.records(agent), 2)).toEqual({ kind: 'error', code: 'TRANSPORT', message: 'drop before output' })
    expect(h.scripted.requests).toHaveLength(3)
  })
})
