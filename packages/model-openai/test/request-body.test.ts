import { afterEach, describe, expect, it } from 'vitest'
import { Config, resolveSettings } from '../src/config.ts'
import { fitsStrictMode } from '../src/output-format.ts'
import { collect, providerFor, request, startServer, textReply, TEST_KEY } from './fake-server.ts'

let server: Awaited<ReturnType<typeof startServer>> | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

describe('request mapping', () => {
  it('sends system, user blocks, assistant tool calls, tool results and tools as the server receives them', async () => {
    server = await startServer([textReply('ok')])
    const { provider } = providerFor(server.url, { maxTokens: 512, temperature: 0.2 })
    await collect(provider.stream({
      system: 'You are terse.',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'List files' }, { type: 'text', text: 'then read a.txt' }] },
        {
          role: 'assistant', text: 'Looking.', reasoning: 'private chain of thought',
          toolCalls: [{ id: 'call_1', name: 'list_files', arguments: '{"dir":"."}' }, { id: 'call_2', name: 'read_file', arguments: '' }],
        },
        { role: 'tool', callId: 'call_1', name: 'list_files', ok: true, content: 'a.txt' },
        { role: 'tool', callId: 'call_2', name: 'read_file', ok: false, content: 'Error: missing path' },
        { role: 'assistant', text: 'Done.', toolCalls: [], reasoning: 'more thoughts' },
        { role: 'user', content: [{ type: 'text', text: 'thanks' }] },
      ],
      tools: [{ name: 'read_file', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } }],
    }, new AbortController().signal))

    const [{ url, headers, body }] = server.received
    expect(url).toBe('/v1/chat/completions')
    expect(headers['content-type']).toBe('application/json')
    expect(headers.accept).toBe('text/event-stream')
    expect(body).toEqual({
      model: 'test-model',
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 512,
      temperature: 0.2,
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'List files\n\nthen read a.txt' },
        {
          role: 'assistant', content: 'Looking.', tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'list_files', arguments: '{"dir":"."}' } },
            { id: 'call_2', type: 'function', function: { name: 'read_file', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'a.txt' },
        { role: 'tool', tool_call_id: 'call_2', content: 'Error: missing path' },
        { role: 'assistant', content: 'Done.' },
        { role: 'user', content: 'thanks' },
      ],
      tools: [{ type: 'function', function: { name: 'read_file', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } } }],
    })
    expect(JSON.stringify(body)).not.toContain('thought')
  })

  it('lets the request choose the model and token limit, omits empty tools and honours streamUsage off', async () => {
    server = await startServer([textReply('ok')])
    const { provider } = providerFor(server.url, { maxTokens: 512, streamUsage: false })
    await collect(provider.stream(request({ model: 'other-model', maxTokens: 64 }), new AbortController().signal))
    const { body } = server.received[0]
    expect(body.model).toBe('other-model')
    expect(body.max_tokens).toBe(64)
    expect(body).not.toHaveProperty('tools')
    expect(body).not.toHaveProperty('stream_options')
    expect(body).not.toHaveProperty('temperature')
  })

  it('sends the key as a Bearer header, extra headers too, and an assistant with only tool calls as null content', async () => {
    server = await startServer([textReply('ok')])
    const { provider } = providerFor(server.url, { headers: { 'x-team': 'core' } })
    await collect(provider.stream(request({
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'go' }] },
        { role: 'assistant', text: '', toolCalls: [{ id: 'c', name: 't', arguments: '{}' }] },
        { role: 'tool', callId: 'c', name: 't', ok: true, content: 'r' },
      ],
    }), new AbortController().signal))
    const { headers, body } = server.received[0]
    expect(headers.authorization).toBe(`Bearer ${TEST_KEY}`)
    expect(headers['x-team']).toBe('core')
    expect(body.messages[1]).toEqual({ role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 't', arguments: '{}' } }] })
  })

  it('ends with BAD_REQUEST and sends nothing for a request it cannot map', async () => {
    server = await startServer([textReply('never')])
    const { provider } = providerFor(server.url)
    const chunks = await collect(provider.stream(request({ messages: [{ role: 'robot' } as any] }), new AbortController().signal))
    expect(chunks).toEqual([{ type: 'finish', reason: 'error', error: { code: 'BAD_REQUEST', message: 'openai-compatible: cannot build the request: unsupported message role "robot"' } }])
    expect(server.received).toHaveLength(0)
  })

  describe('an answer in a JSON Schema (outputSchema)', () => {
    const strictSchema = { type: 'object', properties: { ok: { type: 'boolean' }, items: { type: 'array', items: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'], additionalProperties: false } } }, required: ['ok', 'items'], additionalProperties: false }
    const looseSchema = { type: 'object', properties: { ok: { type: 'boolean' }, note: { type: 'string' } }, required: ['ok'] }
    const tools = [{ name: 'read_file', description: 'Read a file', parameters: { type: 'object', properties: { path: { type: 'string' } } } }]

    it('json_schema (openai, custom): response_format on the request, beside the tools; strict when the schema fits strict mode', async () => {
      server = await startServer([textReply('{}')])
      const { provider } = providerFor(server.url)
      await collect(provider.stream(request({ system: 'Be brief.', tools, outputSchema: { name: 'verdict', schema: strictSchema } }), new AbortController().signal))
      await collect(provider.stream(request({ system: 'Be brief.', tools, outputSchema: { name: 'verdict', schema: looseSchema } }), new AbortController().signal))
      const [strict, loose] = server.received.map((entry) => entry.body)
      expect(strict.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'verdict', schema: strictSchema, strict: true } })
      expect(strict.tools).toHaveLength(1)
      // The option is the whole ask: the system prompt stays as it was.
      expect(strict.messages[0]).toEqual({ role: 'system', content: 'Be brief.' })
      expect(loose.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'verdict', schema: looseSchema, strict: false } })
    })

    it('json_object (deepseek\'s default): JSON mode, and the schema in the system prompt', async () => {
      server = await startServer([textReply('{}')])
      const { provider } = providerFor(server.url, { structuredOutput: 'json_object' })
      await collect(provider.stream(request({ system: 'Be brief.', outputSchema: { name: 'verdict', schema: looseSchema } }), new AbortController().signal))
      const { body } = server.received[0]
      expect(body.response_format).toEqual({ type: 'json_object' })
      expect(body.messages[0].content).toBe(`Be brief.\n\nYour final answer (the text you reply with once you call no more tools) must be exactly one JSON value, valid against the JSON Schema "verdict" below.\nWrite only the JSON: no Markdown code fence, no text before or after it.\n${JSON.stringify(looseSchema)}`)
      expect(resolveSettings(Config({ preset: 'deepseek', apiKey: 'k' }), {})).toMatchObject({ settings: { structuredOutput: 'json_object' } })
      expect(resolveSettings(Config({ preset: 'openai', apiKey: 'k' }), {})).toMatchObject({ settings: { structuredOutput: 'json_schema' } })
    })

    it('prompt: the system prompt only (a system message is added when the request has none), no response_format', async () => {
      server = await startServer([textReply('{}')])
      const { provider } = providerFor(server.url, { structuredOutput: 'prompt' })
      await collect(provider.stream(request({ outputSchema: { name: 'verdict', schema: looseSchema } }), new AbortController().signal))
      await collect(provider.stream(request(), new AbortController().signal))
      const [asked, plain] = server.received.map((entry) => entry.body)
      expect(asked).not.toHaveProperty('response_format')
      expect(asked.messages[0]).toEqual({ role: 'system', content: expect.stringContaining(`valid against the JSON Schema "verdict" below.`) })
      expect(plain).not.toHaveProperty('response_format')
      expect(plain.messages.map((message: { role: string }) => message.role)).toEqual(['user'])
    })

    it('strict mode fits only schemas whose every object is closed and requires all its properties', () => {
      expect(fitsStrictMode(strictSchema)).toBe(true)
      expect(fitsStrictMode(looseSchema)).toBe(false)
      expect(fitsStrictMode({ type: 'array', items: {} })).toBe(false)
      expect(fitsStrictMode({ type: 'object', properties: { a: { oneOf: [{ type: 'string' }, { type: 'integer' }] } }, required: ['a'], additionalProperties: false })).toBe(false)
      expect(fitsStrictMode({ type: 'object', properties: { a: { $ref: '#/$defs/a' } }, required: ['a'], additionalProperties: false, $defs: { a: { type: 'object', properties: { b: { type: 'string' } }, additionalProperties: false } } })).toBe(false)
      expect(fitsStrictMode({ type: 'object', properties: { a: { anyOf: [{ type: 'string' }, { type: 'object', properties: {}, additionalProperties: false }] } }, required: ['a'], additionalProperties: false })).toBe(true)
    })
  })
})
