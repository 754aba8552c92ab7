import { afterEach, describe, expect, it } from 'vitest'
import type { ModelChunk } from '@goalkeeper/model'
import { collect, delta, frame, lastOf, pause, providerFor, request, startServer, startSse, textReply, type Handler } from './fake-server.ts'

let server: Awaited<ReturnType<typeof startServer>> | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const deferred = () => {
  let resolve!: () => void
  const promise = new Promise<void>((r) => (resolve = r))
  return { promise, resolve }
}

const setup = async (handlers: Handler[], overrides: Record<string, unknown> = {}) => {
  server = await startServer(handlers)
  return providerFor(server.url, overrides).provider
}

describe('transport failures, timeouts and cancellation', () => {
  it('ends with TRANSPORT and does not retry when the connection drops after output', async () => {
    const drop = deferred()
    const provider = await setup([async (res) => {
      startSse(res)
      res.write(delta({ content: 'partial' }))
      await drop.promise
      res.socket!.destroy()
    }, textReply('must not be used')])
    const chunks: ModelChunk[] = []
    for await (const chunk of provider.stream(request(), new AbortController().signal)) {
      chunks.push(chunk)
      if (chunk.type === 'text') drop.resolve()
    }
    expect(chunks[0]).toEqual({ type: 'text', text: 'partial' })
    expect(chunks[1]).toMatchObject({ type: 'finish', reason: 'error', error: { code: 'TRANSPORT' } })
    expect(chunks).toHaveLength(2)
    expect(server!.received).toHaveLength(1)
  })

  it('retries a connection dropped before any output', async () => {
    const provider = await setup([(res) => {
      startSse(res)
      res.socket!.destroy()
    }, textReply('second try')])
    const chunks = await collect(provider.stream(request(), new AbortController().signal))
    expect(chunks).toEqual([{ type: 'text', text: 'second try' }, { type: 'finish', reason: 'stop' }])
    expect(server!.received).toHaveLength(2)
  })

  it('ends a stalled stream after idleTimeoutMs with TRANSPORT, without retry after output', async () => {
    const provider = await setup([(res) => {
      startSse(res)
      res.write(delta({ content: 'then silence' }))
    }], { idleTimeoutMs: 150 })
    const chunks = await collect(provider.stream(request(), new AbortController().signal))
    expect(chunks[0]).toEqual({ type: 'text', text: 'then silence' })
    expect(lastOf(chunks)).toMatchObject({ type: 'finish', reason: 'error', error: { code: 'TRANSPORT', message: expect.stringMatching(/stalled \(no data for 150 ms\)/) } })
    expect(server!.received).toHaveLength(1)
    await server!.received[0].closed
  })

  it('retries a stream that stalls before any output', async () => {
    const provider = await setup([(res) => startSse(res), textReply('recovered')], { idleTimeoutMs: 100 })
    const chunks = await collect(provider.stream(request(), new AbortController().signal))
    expect(chunks).toEqual([{ type: 'text', text: 'recovered' }, { type: 'finish', reason: 'stop' }])
    expect(server!.received).toHaveLength(2)
  })

  it('counts keep-alive comments as activity for the idle timeout', async () => {
    // The stream lasts about twice the idle timeout, with gaps of a quarter of it.
    const provider = await setup([async (res) => {
      startSse(res)
      for (let i = 0; i < 8; i++) {
        res.write(': keep-alive\n\n')
        await pause(50)
      }
      res.end(delta({ content: 'slow but alive' }, 'stop') + frame('[DONE]'))
    }], { idleTimeoutMs: 200, maxRetries: 0 })
    const chunks = await collect(provider.stream(request(), new AbortController().signal))
    expect(chunks).toEqual([{ type: 'text', text: 'slow but alive' }, { type: 'finish', reason: 'stop' }])
  })

  it('ends with TRANSPORT when no response headers arrive within requestTimeoutMs', async () => {
    const provider = await setup([() => {}], { requestTimeoutMs: 100, maxRetries: 1 })
    const chunks = await collect(provider.stream(request(), new AbortController().signal))
    expect(chunks).toEqual([{ type: 'finish', reason: 'error', error: { code: 'TRANSPORT', message: expect.stringMatching(/no response from 127\.0\.0\.1:\d+ within 100 ms/) } }])
    expect(server!.received).toHaveLength(2)
    await Promise.all(server!.received.map((entry) => entry.closed))
  })

  it('reports a refused connection as TRANSPORT with its cause', async () => {
    server = await startServer([textReply('never')])
    const { url } = server
    await server.close()
    server = undefined
    const { provider } = providerFor(url, { maxRetries: 1 })
    const chunks = await collect(provider.stream(request(), new AbortController().signal))
    expect(chunks).toEqual([{ type: 'finish', reason: 'error', error: { code: 'TRANSPORT', message: expect.stringMatching(/connection to 127\.0\.0\.1:\d+ failed: ECONNREFUSED/) } }])
  })

  it('closes the socket at once when the caller aborts mid-stream, and does not retry', async () => {
    const provider = await setup([(res) => {
      startSse(res)
      res.write(delta({ content: 'first' }))
    }, textReply('must not be used')])
    const controller = new AbortController()
    const chunks: ModelChunk[] = []
    for await (const chunk of provider.stream(request(), controller.signal)) {
      chunks.push(chunk)
      if (chunk.type === 'text') controller.abort()
    }
    await server!.received[0].closed
    expect(chunks).toEqual([{ type: 'text', text: 'first' }, { type: 'finish', reason: 'error', error: { code: 'ABORTED', message: 'openai-compatible: request aborted' } }])
    expect(server!.received).toHaveLength(1)
  })

  it('closes the socket when the caller stops iterating early', async () => {
    const provider = await setup([(res) => {
      startSse(res)
      res.write(delta({ content: 'first' }))
    }])
    for await (const chunk of provider.stream(request(), new AbortController().signal)) {
      expect(chunk).toEqual({ type: 'text', text: 'first' })
      break
    }
    await server!.received[0].closed
  })

  it('stops waiting for a retry when the caller aborts during the backoff', async () => {
    server = await startServer([(res) => {
      res.writeHead(429, { 'retry-after': '60', 'content-type': 'application/json' })
      res.end('{"error":{"message":"later"}}')
    }])
    const { provider, logged } = providerFor(server.url, { maxDelayMs: 120_000 })
    const backingOff = logged(/retry 1 of 3 in 60000 ms/)
    const controller = new AbortController()
    const stream = provider.stream(request(), controller.signal)[Symbol.asyncIterator]()
    const next = stream.next()
    await backingOff
    controller.abort()
    expect((await next).value).toMatchObject({ type: 'finish', reason: 'error', error: { code: 'ABORTED' } })
    expect((await stream.next()).done).toBe(true)
    expect(server!.received).toHaveLength(1)
  })

  it('makes no request when the signal is already aborted', async () => {
    const provider = await setup([textReply('never')])
    const controller = new AbortController()
    controller.abort()
    const chunks = await collect(provider.stream(request(), controller.signal))
    expect(chunks).toEqual([{ type: 'finish', reason: 'error', error: { code: 'ABORTED', message: 'openai-compatible: request aborted' } }])
    expect(server!.received).toHaveLength(0)
  })
})
