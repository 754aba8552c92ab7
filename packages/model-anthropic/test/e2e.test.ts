// The plugin in the shared harness (real session files, tools and agent loop) against the replay server:
// what goes back to the API, byte for byte, and what the session keeps.
import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { CreateAgentOptions } from '@goalkeeper/agent-loop'
import { createHarness, type Harness } from '@goalkeeper/test-kit'
import * as plugin from '../src/index.ts'
import { counted, cut, stream, thinkingBlocksOf, type Reply } from '@goalkeeper/test-kit'
import { useReplay } from './helpers.ts'

const KEY = 'sk-ant-e2e-5d4c3b2a19f8e7d6c5b4SECRET'
const serve = useReplay()
const savedEnv = { ...process.env }
let harness: Harness | undefined
afterEach(async () => {
  await harness?.dispose()
  harness = undefined
  process.env = { ...savedEnv }
})

const start = async (replies: Reply[], config: Record<string, unknown> = {}, countReply?: Reply, agentOptions: Partial<CreateAgentOptions> = {}) => {
  const server = await serve(replies, countReply)
  harness = await createHarness()
  process.env.ANTHROPIC_API_KEY = KEY
  await harness.load(plugin, { baseUrl: server.url, baseDelayMs: 1, ...config })
  const agent = await harness.createAgent({ model: 'anthropic', ...agentOptions })
  return { server, agent }
}

/** Where `cache_control` sits in a request body, as paths. */
const breakpoints = (body: any): string[] => {
  const found: string[] = []
  const walk = (value: any, at: string) => {
    if (!value || typeof value !== 'object') return
    if (value.cache_control) found.push(at)
    for (const [key, inner] of Object.entries(value)) walk(inner, `${at}/${key}`)
  }
  walk(body, '')
  return found.sort()
}

describe('model-anthropic end to end through the harness', () => {
  it('sends signed thinking blocks back byte for byte with the tool results, with the cache breakpoints moved forward', async () => {
    const { server, agent } = await start([stream('thinking-tool-use.sse'), stream('thinking-redacted-text.sse'), stream('text.sse')])
    await fs.writeFile(path.join(harness!.workspace, 'notes.md'), 'hello\nhello\n')

    agent.send({ content: 'What does notes.md say?' })
    await agent.whenIdle()
    agent.send({ content: 'Thanks.' })
    await agent.whenIdle()

    expect(server.messages).toHaveLength(3)
    const [first, second, third] = server.messages
    const [thinking] = thinkingBlocksOf('thinking-tool-use.sse')
    const assistantTurn = `{"role":"assistant","content":[${JSON.stringify(thinking)},{"type":"text","text":"Reading notes.md."},{"type":"tool_use","id":"toolu_01ThinkReadQ5r6S7t8U9v0W1","name":"read_file","input":{"path":"notes.md"}}]}`
    // The block as the stream assembled it, signature and all, in the bytes of the next request.
    expect(second.raw).toContain(assistantTurn)
    expect(third.raw).toContain(assistantTurn)
    for (const block of thinkingBlocksOf('thinking-redacted-text.sse')) expect(third.raw).toContain(JSON.stringify(block))
    expect(second.body.messages.at(-1).content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_01ThinkReadQ5r6S7t8U9v0W1', content: expect.stringContaining('hello') })

    // System prompt; the end of the history; the end of the previous request's history.
    expect(breakpoints(first.body)).toEqual(['/messages/0/content/0', '/system/0'])
    expect(breakpoints(second.body)).toEqual(['/messages/0/content/0', '/messages/2/content/0', '/system/0'])
    expect(breakpoints(third.body)).toEqual(['/messages/2/content/0', '/messages/4/content/0', '/system/0'])
    expect(third.body.messages.map((message: any) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user'])

    const records = harness!.readFile(agent).filter((record) => record.type === 'assistant/message').map((record) => record.data as any)
    expect(records[0].reasoningBlocks).toEqual([thinking])
    expect(records[0].reasoning).toBe('The user wants the notes file checked. I should read it first.')
    expect(records[0].usage).toEqual({ inputTokens: 3462, outputTokens: 142, cachedInputTokens: 0, cacheWriteInputTokens: 1650 })
    expect(records[1].reasoningBlocks.map((block: any) => block.type)).toEqual(['thinking', 'redacted_thinking'])

    const file = await fs.readFile(agent.session.file, 'utf8')
    expect(file).not.toContain(KEY)
    expect(harness!.logs.map((line) => line.text).join('\n')).not.toContain(KEY)
  })

  it('an output schema is asked for in the system prompt, after the agent\'s own, the tools still offered and free', async () => {
    const schema = { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] }
    const { server, agent } = await start([stream('text.sse')], {}, undefined, { outputSchema: { name: 'verdict', schema } })
    agent.send({ content: 'Is it done?' })
    await agent.whenIdle()
    const [{ body }] = server.messages
    expect(body.system).toHaveLength(2)
    expect(body.system[1]).toEqual({
      type: 'text',
      text: `Your final answer (the text you reply with once you call no more tools) must be exactly one JSON value, valid against the JSON Schema "verdict" below.\nWrite only the JSON: no Markdown code fence, no text before or after it.\n${JSON.stringify(schema)}`,
      cache_control: { type: 'ephemeral' },
    })
    expect(body.system[0].text).not.toContain('"verdict"')
    expect(body.tools.length).toBeGreaterThan(0)
    expect(body).not.toHaveProperty('tool_choice')
  })

  it('a connection lost mid-answer is asked again, the partial answer kept out of the history', async () => {
    const { server, agent } = await start([cut('cut-mid-stream.sse'), stream('text.sse')])
    agent.send({ content: 'Say hello.' })
    await agent.whenIdle()
    expect(server.messages).toHaveLength(2)
    expect(server.messages[1].raw).toBe(server.messages[0].raw)
    const records = harness!.records(agent)
    const answers = records.filter((record) => record.type === 'assistant/message').map((record) => record.data as any)
    expect(answers.map((answer) => [answer.text, answer.partial ?? false])).toEqual([['Half an ans', true], ['Hello from Claude.', false]])
    expect(records.find((record) => record.type === 'turn/end')?.data).toEqual({ turn: 1, outcome: { kind: 'completed' } })
  })

  it('the compaction decision takes the count-tokens figure over the estimate', async () => {
    // A prompt the estimate puts near 1000 tokens, in a window of 1000: over the threshold by estimate alone.
    const { server, agent } = await start([stream('text.sse')], { contextWindow: 1000 }, counted(120))
    agent.send({ content: 'word '.repeat(800) })
    await agent.whenIdle()
    expect(server.counts).toHaveLength(1)
    expect(server.counts[0].body.messages[0].content[0].text).toBe('word '.repeat(800))
    expect(harness!.records(agent).some((record) => record.type === 'context/compacted')).toBe(false)
    expect(server.messages).toHaveLength(1)
  })

  it('registers nothing without a key, and says which variable switches it on', async () => {
    harness = await createHarness()
    delete process.env.ANTHROPIC_API_KEY
    await harness.load(plugin, {})
    expect(harness.root.models.get('anthropic')).toBeUndefined()
    expect(harness.root.models.standbys()).toEqual([{ name: 'anthropic', reason: 'ANTHROPIC_API_KEY is unset', enableWith: ['ANTHROPIC_API_KEY'] }])
    process.env.ANTHROPIC_API_KEY = KEY
    process.env.ANTHROPIC_BASE_URL = 'https://gateway.example.com/anthropic'
    await harness.load(plugin, { name: 'claude' })
    expect(harness.root.models.describe('claude')).toEqual({
      summary: 'claude at gateway.example.com, key from ANTHROPIC_API_KEY', offline: false, host: 'gateway.example.com',
      vendor: 'anthropic', model: 'claude-sonnet-4-6', keyEnv: 'ANTHROPIC_API_KEY',
    })
    expect(harness.root.models.get('claude')?.contextWindow?.()).toBe(200_000)
  })
})
