// CreateAgentOptions.outputSchema: every model call of the agent's turns asks for it; the summary call of a compaction does not.
import { describe, expect } from 'vitest'
import { COMPACTION_INSTRUCTION } from '@goalkeeper/agent-loop'
import { it } from './helpers.ts'

const verdict = { name: 'verdict', schema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] } }

describe('outputSchema', () => {
  it('is asked for on every model call of a turn, tool steps included, but not by the summary call', async ({ h }) => {
    h.scripted.push({ toolCalls: [{ name: 'echo', arguments: { text: 'x' } }] }, { text: '{"ok":true}' }, { text: '{"ok":false}' }, { text: 'summary of the work' })
    const asked = structuredClone(verdict)
    const agent = await h.createAgent({ outputSchema: asked })
    // The agent keeps its own copy: a later change by the caller changes no request.
    asked.schema.required.push('changed')
    // Two turns with a long first prompt: enough history for a compaction to replace.
    agent.send({ content: 'check it ' + 'p'.repeat(2000) })
    await agent.whenIdle()
    agent.send({ content: 'again' })
    await agent.whenIdle()
    expect(await agent.compact()).toMatchObject({ kind: 'compacted' })
    const [tool, answer, second, summary] = h.scripted.requests
    for (const request of [tool, answer, second]) expect(request.outputSchema).toEqual(verdict)
    expect(summary.system).toBe(COMPACTION_INSTRUCTION)
    expect(summary).not.toHaveProperty('outputSchema')
  })

  it('is left out of the requests of an agent created without one', async ({ h }) => {
    h.scripted.push({ text: 'plain' })
    const agent = await h.createAgent()
    agent.send({ content: 'hi' })
    await agent.whenIdle()
    expect(h.scripted.requests[0]).not.toHaveProperty('outputSchema')
  })

  it('refuses a name the providers cannot take, or a schema that is not an object, before anything is recorded', async ({ h }) => {
    await expect(h.createAgent({ outputSchema: { name: 'final answer', schema: {} } })).rejects.toMatchObject({ code: 'INVALID_OPTIONS', message: expect.stringMatching(/^outputSchema\.name must match .* got "final answer"$/) })
    await expect(h.createAgent({ outputSchema: { name: 'ok', schema: [] as never } })).rejects.toMatchObject({ code: 'INVALID_OPTIONS', message: 'outputSchema.schema must be a JSON Schema object' })
  })
})
