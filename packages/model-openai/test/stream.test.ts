import { describe, expect, it } from 'vitest'
import { delta, frame, runOnce, sse, startSse, tick, usageFrame, useServers, type Handler } from './fake-server.ts'

const serve = useServers()
const run = (handlers: Handler[], overrides: Record<string, unknown> = {}) => runOnce(serve, handlers, overrides)

describe('stream decoding', () => {
  it('reassembles frames split mid-line across writes and several events coalesced in one write', async () => {
    const text = delta({ role: 'assistant', content: 'Hel' }) + delta({ content: 'lo, ' }) + delta({ content: 'wörld' })
      + delta({}, 'stop') + usageFrame({ prompt_tokens: 7, completion_tokens: 3 }) + frame('[DONE]')
    const bytes = Buffer.from(text)
    // Cut inside "data:", inside the JSON, inside the two-byte "ö", and between the two newlines of an event end.
    const cuts = [3, 25, bytes.indexOf(Buffer.from('ö')) + 1, bytes.indexOf('\n\n') + 1, bytes.length - 9].sort((a, b) => a - b)
    const { chunks } = await run([async (res) => {
      startSse(res)
      let from = 0
      for (const cut of cuts) {
        res.write(bytes.subarray(from, cut))
        from = cut
        await tick()
      }
      res.end(bytes.subarray(from))
    }])
    expect(chunks).toEqual([
      { type: 'text', text: 'Hel' },
      { type: 'text', text: 'lo, ' },
      { type: 'text', text: 'wörld' },
      { type: 'usage', usage: { inputTokens: 7, outputTokens: 3 } },
      { type: 'finish', reason: 'stop' },
    ])
  })

  it('assembles tool-call arguments split across chunks, two calls in parallel', async () => {
    const { chunks } = await run([sse(
      delta({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'read_file', arguments: '' } }] }),
      delta({ tool_calls: [{ index: 0, function: { arguments: '{"pa' } }] }),
      delta({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'list_files', arguments: '{"dir"' } }] }),
      delta({ tool_calls: [{ index: 0, function: { arguments: 'th": "a.txt"}' } }] }),
      delta({ tool_calls: [{ index: 1, function: { arguments: ': "."}' } }] }),
      delta({}, 'tool_calls'),
      frame('[DONE]'),
    )])
    expect(chunks).toEqual([
      { type: 'tool-call', call: { id: 'call_a', name: 'read_file', arguments: '{"path": "a.txt"}' } },
      { type: 'tool-call', call: { id: 'call_b', name: 'list_files', arguments: '{"dir": "."}' } },
      { type: 'finish', reason: 'tool-calls' },
    ])
  })

  it('maps the usage frame, including cached and reasoning tokens', async () => {
    const { chunks, received } = await run([sse(
      delta({ content: 'ok' }),
      delta({}, 'stop'),
      usageFrame({ prompt_tokens: 120, completion_tokens: 40, prompt_tokens_details: { cached_tokens: 100 }, completion_tokens_details: { reasoning_tokens: 30 } }),
      frame('[DONE]'),
    )])
    expect(chunks.slice(1)).toEqual([
      { type: 'usage', usage: { inputTokens: 120, outputTokens: 40, cachedInputTokens: 100, reasoningTokens: 30 } },
      { type: 'finish', reason: 'stop' },
    ])
    expect(received[0].body.stream_options).toEqual({ include_usage: true })
  })

  it('maps DeepSeek cache-hit tokens', async () => {
    const { chunks } = await run([sse(delta({ content: 'ok' }, 'stop'), usageFrame({ prompt_tokens: 50, completion_tokens: 2, prompt_cache_hit_tokens: 32, prompt_cache_miss_tokens: 18 }), frame('[DONE]'))])
    expect(chunks).toContainEqual({ type: 'usage', usage: { inputTokens: 50, outputTokens: 2, cachedInputTokens: 32 } })
  })

  it('maps the length finish reason to max-tokens', async () => {
    const { chunks } = await run([sse(delta({ content: 'cut sho' }), delta({}, 'length'), frame('[DONE]'))])
    expect(chunks).toEqual([{ type: 'text', text: 'cut sho' }, { type: 'finish', reason: 'max-tokens' }])
  })

  it('maps content_filter to an error finish', async () => {
    const { chunks } = await run([sse(delta({ content: 'x' }), delta({}, 'content_filter'), frame('[DONE]'))])
    expect(chunks[1]).toMatchObject({ type: 'finish', reason: 'error', error: { code: 'CONTENT_FILTER' } })
  })

  it('sends reasoning_content to reasoning chunks, kept out of the answer text', async () => {
    const { chunks } = await run([sse(
      delta({ role: 'assistant', content: null, reasoning_content: 'Let me think' }),
      delta({ content: null, reasoning_content: ' about it.' }),
      delta({ content: 'The answer is 4.', reasoning_content: null }),
      delta({}, 'stop'),
      frame('[DONE]'),
    )])
    expect(chunks).toEqual([
      { type: 'reasoning', text: 'Let me think' },
      { type: 'reasoning', text: ' about it.' },
      { type: 'text', text: 'The answer is 4.' },
      { type: 'finish', reason: 'stop' },
    ])
  })

  it('tolerates keep-alive comments between and before events', async () => {
    const { chunks } = await run([sse(': keep-alive\n\n', ': keep-alive\n\n', delta({ content: 'a' }), ': keep-alive\n\n', delta({ content: 'b' }, 'stop'), frame('[DONE]'))])
    expect(chunks).toEqual([{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }, { type: 'finish', reason: 'stop' }])
  })

  it('ends with a clear SERVER error on a malformed JSON frame, without retrying', async () => {
    const { chunks, received } = await run([sse(delta({ content: 'a' }), 'data: {"choices": [ {oops\n\n', delta({}, 'stop'), frame('[DONE]'))])
    expect(chunks[0]).toEqual({ type: 'text', text: 'a' })
    expect(chunks[1]).toMatchObject({ type: 'finish', reason: 'error', error: { code: 'SERVER' } })
    expect((chunks[1] as any).error.message).toMatch(/malformed stream frame.*\{"choices": \[ \{oops/)
    expect(chunks).toHaveLength(2)
    expect(received).toHaveLength(1)
  })

  it('accepts an answer whose stream closes after the finish reason without [DONE]', async () => {
    const { chunks } = await run([sse(delta({ content: 'done' }, 'stop'))])
    expect(chunks).toEqual([{ type: 'text', text: 'done' }, { type: 'finish', reason: 'stop' }])
  })

  it('reports tool calls as tool-calls even when a server says stop', async () => {
    const { chunks } = await run([sse(delta({ tool_calls: [{ index: 0, id: 'c9', function: { name: 'x', arguments: '{}' } }] }), delta({}, 'stop'), frame('[DONE]'))])
    expect(chunks).toEqual([{ type: 'tool-call', call: { id: 'c9', name: 'x', arguments: '{}' } }, { type: 'finish', reason: 'tool-calls' }])
  })

  it('reports an error frame inside the stream with its message', async () => {
    const { chunks } = await run([sse(delta({ content: 'a' }), frame({ error: { message: 'model overloaded', type: 'server_error' } }))])
    expect(chunks[1]).toMatchObject({ type: 'finish', reason: 'error', error: { code: 'SERVER', message: expect.stringContaining('model overloaded') } })
  })
})
