import { describe, expect, it } from 'vitest'
import type { ModelChunk } from '@goalkeeper/model'
import { delta, frame, pause, providerFor, request, runOnce, sse, startSse, tick, useServers, type Handler } from './fake-server.ts'

const serve = useServers()
const run = (handlers: Handler[], overrides: Record<string, unknown> = {}) => runOnce(serve, handlers, overrides)

const MiB = 1024 * 1024

describe('streams from a hostile or broken server', () => {
  it('ends an enormous single SSE line with a clear SERVER error, without retrying', async () => {
    const { finish, received } = await run([(res) => {
      startSse(res)
      res.write(`data: {"choices":[{"index":0,"delta":{"content":"${'a'.repeat(9 * MiB)}`)
      res.end(`"}}]}\n\n${delta({}, 'stop')}`)
    }])
    expect(received).toHaveLength(1)
    expect(finish.error).toEqual({ code: 'SERVER', message: 'openai-compatible: a stream event exceeded 8 MiB' })
  })

  it('caps tool-call arguments that never end', async () => {
    const piece = 'x'.repeat(MiB)
    const { finish, received } = await run([async (res) => {
      startSse(res)
      res.write(delta({ tool_calls: [{ index: 0, id: 'c1', function: { name: 'write_file', arguments: '{"content":"' } }] }))
      for (let i = 0; i < 10 && !res.destroyed; i++) {
        res.write(delta({ tool_calls: [{ index: 0, function: { arguments: piece } }] }))
        await tick()
      }
      res.end(delta({}, 'tool_calls'))
    }])
    expect(received).toHaveLength(1)
    expect(finish.error).toEqual({ code: 'SERVER', message: 'openai-compatible: the tool calls exceeded 1000 calls or 8 MiB' })
  })

  it('caps the number of tool calls in one answer', async () => {
    const calls = Array.from({ length: 1500 }, (_, index) => ({ index, id: `c${index}`, function: { name: 'noop', arguments: '{}' } }))
    const { finish, chunks } = await run([sse(delta({ tool_calls: calls }), delta({}, 'tool_calls'))])
    expect(chunks.filter((chunk) => chunk.type === 'tool-call')).toEqual([])
    expect(finish.error).toEqual({ code: 'SERVER', message: 'openai-compatible: the tool calls exceeded 1000 calls or 8 MiB' })
  })

  it('splits calls that a server sent under the same index with different ids', async () => {
    const { chunks } = await run([sse(
      delta({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'read_file', arguments: '{"path":' } }] }),
      delta({ tool_calls: [{ index: 0, function: { arguments: '"a.txt"}' } }] }),
      delta({ tool_calls: [{ index: 0, id: 'call_b', type: 'function', function: { name: 'list_dir', arguments: '{}' } }] }),
      delta({ tool_calls: [{ index: 1, id: 'call_c', type: 'function', function: { name: 'search', arguments: '{"pattern":"x"}' } }] }),
      delta({}, 'tool_calls'),
      frame('[DONE]'),
    )])
    expect(chunks).toEqual([
      { type: 'tool-call', call: { id: 'call_a', name: 'read_file', arguments: '{"path":"a.txt"}' } },
      { type: 'tool-call', call: { id: 'call_b', name: 'list_dir', arguments: '{}' } },
      { type: 'tool-call', call: { id: 'call_c', name: 'search', arguments: '{"pattern":"x"}' } },
      { type: 'finish', reason: 'tool-calls' },
    ])
  })

  it('still emits a call without id or name, and one whose arguments never form JSON', async () => {
    const { chunks } = await run([sse(
      delta({ tool_calls: [{ index: 0, function: { arguments: '{"path": "a.txt"' } }] }),
      delta({ tool_calls: [{ index: 1, id: 'call_2', function: { name: 'read_file', arguments: '{"path": nope}' } }] }),
      delta({}, 'tool_calls'),
    )])
    const calls = chunks.filter((chunk) => chunk.type === 'tool-call').map((chunk) => (chunk as { call: unknown }).call)
    expect(calls).toEqual([
      { id: expect.stringMatching(/^call_[0-9a-f]{24}$/), name: '', arguments: '{"path": "a.txt"' },
      { id: 'call_2', name: 'read_file', arguments: '{"path": nope}' },
    ])
    expect(chunks.at(-1)).toEqual({ type: 'finish', reason: 'tool-calls' })
  })

  it('decodes characters split across TCP writes, and replaces invalid UTF-8 without losing the rest', async () => {
    const { chunks } = await run([async (res) => {
      startSse(res)
      const bytes = Buffer.from(delta({ content: 'ok 😀 é' }, 'stop'))
      const emoji = bytes.indexOf(Buffer.from('😀'))
      // The 4-byte emoji arrives in three writes, and an invalid byte pair comes before it in its own frame.
      res.write(Buffer.concat([Buffer.from('data: {"choices":[{"index":0,"delta":{"content":"bad '), Buffer.from([0xff, 0xc3])]))
      await tick()
      res.write(Buffer.from('("}}]}\n\n'))
      await tick()
      res.write(bytes.subarray(0, emoji + 1))
      await tick()
      res.write(bytes.subarray(emoji + 1, emoji + 3))
      await tick()
      res.end(bytes.subarray(emoji + 3))
    }])
    expect(chunks).toEqual([
      { type: 'text', text: 'bad \uFFFD\uFFFD(' },
      { type: 'text', text: 'ok 😀 é' },
      { type: 'finish', reason: 'stop' },
    ])
  })

  it('ends an endless stream when the caller aborts, and the server sees the socket close', async () => {
    const server = await serve([async (res) => {
      startSse(res)
      // Five events per write, so one read holds several: nothing after the abort may still come out.
      for (let i = 0; !res.destroyed; i++) {
        res.write(': keep-alive\n\n' + [0, 1, 2, 3, 4].map((j) => delta({ content: `${i}.${j} ` })).join(''))
        await pause(1)
      }
    }])
    const { provider } = providerFor(server.url)
    const controller = new AbortController()
    const chunks: ModelChunk[] = []
    for await (const chunk of provider.stream(request(), controller.signal)) {
      chunks.push(chunk)
      if (chunks.length === 12) controller.abort()
    }
    await server.received[0].closed
    expect(chunks).toHaveLength(13)
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', reason: 'error', error: { code: 'ABORTED' } })
    expect(server.received).toHaveLength(1)
  })
})

describe('frames of the wrong shape', () => {
  it('ignores values of the wrong type instead of failing the stream or passing them on', async () => {
    const { chunks } = await run([sse(
      frame({ choices: { index: 0 } }),
      frame({ choices: [null, 'x', { index: 0, delta: 'text' }] }),
      delta({ content: 42, reasoning_content: { a: 1 } }),
      delta({ content: 'kept' }),
      delta({ tool_calls: { index: 0 } }),
      delta({ tool_calls: [null, 7, { index: 0, id: { not: 'a string' }, function: { name: ['x'], arguments: { a: 1 } } }] }),
      delta({ tool_calls: [{ index: 0, id: 'call_ok', function: { name: 'read_file', arguments: '{}' } }] }),
      frame({ choices: [{ index: 0, delta: {}, finish_reason: 7 }] }),
      delta({}, 'tool_calls'),
    )])
    expect(chunks).toEqual([
      { type: 'text', text: 'kept' },
      { type: 'tool-call', call: { id: 'call_ok', name: 'read_file', arguments: '{}' } },
      { type: 'finish', reason: 'tool-calls' },
    ])
  })
})
