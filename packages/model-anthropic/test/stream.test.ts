// The provider against the recorded event streams of fixtures/, replayed by a local HTTP server.
import { describe, expect, it } from 'vitest'
import { eventsOf, stream, thinkingBlocksOf } from '@goalkeeper/test-kit'
import { runOnce, textOf, useReplay } from './helpers.ts'

const serve = useReplay()

describe('model-anthropic streams', () => {
  it('streams text deltas as they come, ignores pings, and ends with usage and a stop', async () => {
    const { chunks, server } = await runOnce(serve, [stream('text.sse')])
    expect(chunks).toEqual([
      { type: 'text', text: 'Hello' }, { type: 'text', text: ' from' }, { type: 'text', text: ' Claude.' },
      { type: 'usage', usage: { inputTokens: 25, outputTokens: 8 } },
      { type: 'finish', reason: 'stop' },
    ])
    const [sent] = server.messages
    expect(sent.path).toBe('/v1/messages')
    // The SDK sends the key as a bearer token; it is in no other header and not in the body.
    expect(sent.headers.authorization).toBe('Bearer sk-ant-test-0123456789abcdefSECRET')
    expect(Object.entries(sent.headers).filter(([, value]) => String(value).includes('SECRET')).map(([name]) => name)).toEqual(['authorization'])
    expect(sent.raw).not.toContain('SECRET')
    expect(sent.headers['anthropic-version']).toBeTruthy()
    expect(sent.body).toMatchObject({ model: 'claude-sonnet-4-6', max_tokens: 64000, stream: true, messages: [{ role: 'user', content: [{ type: 'text', text: 'hello', cache_control: { type: 'ephemeral' } }] }] })
  })

  it('joins input_json_delta fragments into whole tool calls, parallel calls in order, with cache write tokens in the usage', async () => {
    const { chunks, finish } = await runOnce(serve, [stream('tool-use-parallel.sse')])
    expect(textOf(chunks)).toBe("I'll read both files.")
    expect(chunks.filter((chunk) => chunk.type === 'tool-call')).toEqual([
      { type: 'tool-call', call: { id: 'toolu_01ReadNotesA1b2C3d4E5f6G7', name: 'read_file', arguments: '{"path": "notes.md"}' } },
      // A call without arguments streams one empty fragment: it is `{}`.
      { type: 'tool-call', call: { id: 'toolu_01ListDirH8i9J0k1L2m3N4', name: 'list_dir', arguments: '{}' } },
    ])
    expect(chunks.find((chunk) => chunk.type === 'usage')).toEqual({ type: 'usage', usage: { inputTokens: 1203, outputTokens: 97, cachedInputTokens: 0, cacheWriteInputTokens: 0 } })
    expect(finish).toEqual({ type: 'finish', reason: 'tool-calls' })
  })

  it('streams thinking as reasoning and hands over each signed block whole, as the API sent it', async () => {
    const { chunks } = await runOnce(serve, [stream('thinking-redacted-text.sse')])
    expect(chunks.filter((chunk) => chunk.type === 'reasoning').map((chunk) => (chunk as { text: string }).text).join(''))
      .toBe('notes.md holds two lines; nothing else is needed.')
    const blocks = chunks.filter((chunk) => chunk.type === 'reasoning-block').map((chunk) => (chunk as { block: unknown }).block)
    // The oracle assembles the fixture's own events; the signature came in two deltas.
    expect(blocks).toEqual(thinkingBlocksOf('thinking-redacted-text.sse'))
    expect(blocks.map((block: any) => block.type)).toEqual(['thinking', 'redacted_thinking'])
    expect(textOf(chunks)).toBe('notes.md says hello twice.')
    // Cache reads are part of the input, as OpenAI counts cached tokens.
    expect(chunks.find((chunk) => chunk.type === 'usage')).toEqual({ type: 'usage', usage: { inputTokens: 1746, outputTokens: 61, cachedInputTokens: 1650, cacheWriteInputTokens: 0 } })
  })

  it('a refusal is the answer plus a REFUSED finish; max_tokens is max-tokens', async () => {
    const refused = await runOnce(serve, [stream('refusal.sse')])
    expect(textOf(refused.chunks)).toBe("I can't help with that.")
    expect(refused.finish).toEqual({ type: 'finish', reason: 'error', error: { code: 'REFUSED', message: "anthropic: the model refused: I can't help with that." } })
    const cut = await runOnce(serve, [stream('max-tokens.sse')])
    expect(cut.finish).toEqual({ type: 'finish', reason: 'max-tokens' })
  })

  it('pause_turn sends the answer so far back as is and goes on in the same call', async () => {
    const { chunks, server, finish } = await runOnce(serve, [stream('pause-turn.sse'), stream('after-pause.sse')])
    expect(textOf(chunks)).toBe('Working on it, done.')
    expect(finish).toEqual({ type: 'finish', reason: 'stop' })
    expect(server.messages).toHaveLength(2)
    const messages = server.messages[1].body.messages
    expect(messages.at(-1)).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'Working on it' }] })
    // Usage of both calls together.
    expect(chunks.find((chunk) => chunk.type === 'usage')).toEqual({ type: 'usage', usage: { inputTokens: 620, outputTokens: 9 } })
  })

  it('the fixtures hold every documented event type', () => {
    const types = new Set(['text.sse', 'tool-use-parallel.sse', 'thinking-redacted-text.sse', 'overloaded-mid-stream.sse']
      .flatMap((name) => eventsOf(name).map((event) => event.type === 'content_block_delta' ? event.delta.type : event.type)))
    for (const type of ['message_start', 'content_block_start', 'text_delta', 'input_json_delta', 'thinking_delta', 'signature_delta', 'content_block_stop', 'message_delta', 'message_stop', 'ping', 'error']) {
      expect(types, type).toContain(type)
    }
  })
})
