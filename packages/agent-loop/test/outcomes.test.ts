import { describe, expect } from 'vitest'
import type { Context } from 'cordis'
import { MODEL_ERROR_CODES } from '@goalkeeper/model'
import { isRecordOf, lastAssistantText, turnOutcome } from '@goalkeeper/session'
import type { Agent, StepSummary } from '@goalkeeper/agent-loop'
import { createHarness, type Harness } from '@goalkeeper/test-kit'
import { it } from './helpers.ts'

const lastOutcome = (h: Harness, agent: Agent) => turnOutcome(h.records(agent))

describe('turn outcomes', () => {

  it.for(MODEL_ERROR_CODES)('a model error %s ends the turn as an error with that code', async (code, { h }) => {
    const agent = await h.createAgent()
    h.scripted.push({ kind: 'error', code, message: `scripted ${code}` })
    const errors = h.events(['agent/error', 'agent/turn-end'])
    agent.send({ content: 'go' })
    await agent.whenIdle()
    // A refusal as too long says what compaction tried (nothing here: the prompt is all there is).
    const message = code === 'CONTEXT_OVERFLOW'
      ? 'the model refused the request as too long once; the history could not be compacted (nothing before the recent exchanges to summarise, and nothing is left to remove). Last refusal: scripted CONTEXT_OVERFLOW'
      : `scripted ${code}`
    expect(lastOutcome(h, agent)).toEqual({ kind: 'error', code, message })
    expect(errors.map((e) => e.name)).toEqual(['agent/error', 'agent/turn-end'])
    expect(errors[0].args.slice(1)).toEqual([1, { code, message }])
  })

  it('max-tokens ends the turn as max-tokens without an agent/error', async ({ h }) => {
    const agent = await h.createAgent()
    h.scripted.push({ kind: 'max-tokens', text: 'cut off' })
    const errors = h.events(['agent/error'])
    agent.send({ content: 'go' })
    await agent.whenIdle()
    expect(lastOutcome(h, agent)).toEqual({ kind: 'max-tokens' })
    expect(errors).toEqual([])
  })

  it('a missing provider is an INTERNAL error outcome, not a crash', async ({ h }) => {
    const agent = await h.createAgent({ model: 'absent' })
    agent.send({ content: 'go' })
    await agent.whenIdle()
    expect(lastOutcome(h, agent)).toEqual({ kind: 'error', code: 'INTERNAL', message: expect.stringContaining('"absent"') })
    h.scripted.push({ text: 'still alive' })
    const other = await h.createAgent()
    other.send({ content: 'go' })
    await other.whenIdle()
    expect(lastOutcome(h, other)).toEqual({ kind: 'completed' })
  })

  it('a provider that throws or ends without a finish chunk ends the turn INTERNAL, keeping the partial text', async ({ h }) => {
    const partial = { type: 'text', text: 'partial' } as const
    await h.load({
      name: 'broken-providers',
      inject: ['models'],
      apply(ctx: Context) {
        ctx.models.register('throws', { async *stream() { yield partial; throw new Error('socket closed') } })
        ctx.models.register('unfinished', { async *stream() { yield partial } })
      },
    })
    for (const [model, message] of [['throws', 'model provider failed: socket closed'], ['unfinished', 'model stream ended without a finish chunk']]) {
      const agent = await h.createAgent({ model })
      agent.send({ content: 'go' })
      await agent.whenIdle()
      expect(turnOutcome(h.records(agent), 1)).toEqual({ kind: 'error', code: 'INTERNAL', message })
      expect(lastAssistantText(h.records(agent), 1)).toBe('partial')
    }
  })

  it('tool call ids a model repeats within a step are made unique, so each result pairs with its call', async ({ h }) => {
    const agent = await h.createAgent()
    const echo = (text: string) => ({ id: 'same', name: 'echo', arguments: { text } })
    h.scripted.push({ toolCalls: [echo('a'), echo('b')] }, { text: 'ok' })
    agent.send({ content: 'go' })
    await agent.whenIdle()
    const results = h.records(agent).filter((record) => isRecordOf(record, 'tool/result')).map((record) => [record.data.callId, record.data.content])
    expect(results).toEqual([['same', 'a'], ['same_', 'b']])
    const calls = h.scripted.requests[1].messages.flatMap((message) => message.role === 'assistant' ? message.toolCalls.map((call) => call.id) : [])
    expect(calls).toEqual(['same', 'same_'])
  })

  it('the step bound ends the turn with MAX_STEPS', async ({ h }) => {
    const agent = await h.createAgent({ maxSteps: 2 })
    const echo = { toolCalls: [{ name: 'echo', arguments: { text: 'again' } }] }
    h.scripted.push(echo, echo, { text: 'never asked' })
    agent.send({ content: 'go' })
    await agent.whenIdle()
    expect(h.scripted.requests).toHaveLength(2)
    expect(lastOutcome(h, agent)).toMatchObject({ kind: 'error', code: 'MAX_STEPS' })
  })

  it('invalid tool arguments, unknown tools and throwing tools become readable tool errors', async ({ h }) => {
    const agent = await h.createAgent()
    const summaries: StepSummary[] = []
    h.root.on('agent/step-end', (_agent, _turn, _step, summary) => { summaries.push(summary) })
    h.scripted.push({
      toolCalls: [
        { name: 'echo', arguments: '{not json' },
        { name: 'echo', arguments: { wrong: 1 } },
        { name: 'missing' },
        { name: 'boom' },
      ],
    }, { text: 'I see the errors.' })
    agent.send({ content: 'go' })
    await agent.whenIdle()
    const results = h.records(agent).filter((r) => r.type === 'tool/result').map((r) => r.data as any)
    expect(results.map((r) => [r.ok, r.error?.code])).toEqual([
      [false, 'INVALID_JSON'], [false, 'INVALID_ARGUMENTS'], [false, 'UNKNOWN_TOOL'], [false, 'TOOL_FAILED'],
    ])
    const toolMessages = h.scripted.requests[1].messages.filter((m) => m.role === 'tool') as any[]
    expect(toolMessages).toHaveLength(4)
    for (const message of toolMessages) expect(message.content.length).toBeGreaterThan(10)
    expect(toolMessages[1].content).toMatch(/text/)
    expect(toolMessages[3].content).toMatch(/boom failed/)
    expect(summaries[0]).toMatchObject({ turn: 1, step: 1, succeeded: 0, failed: 4, finish: 'tool-calls' })
    expect(lastOutcome(h, agent)).toEqual({ kind: 'completed' })
  })

  it('creating an agent with no registered model of the preference list is a clear error', async () => {
    const other = await createHarness({ workspaceTools: false, agentLoop: { model: ['deepseek'] } })
    try {
      await expect(other.root.agents.create({ cwd: other.workspace })).rejects.toThrow(/no model provider is registered \(looked for deepseek\)/)
      const agent = await other.root.agents.create({ cwd: other.workspace, model: 'scripted' })
      expect(agent.model).toBe('scripted')
    } finally {
      await other.dispose()
    }
  })
})
