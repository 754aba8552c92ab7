import { describe, expect, it } from 'vitest'
import { createOpenAIProvider } from '../src/provider.ts'
import { collect, delta, jsonError, lastOf, request, runOnce, settingsFor, startSse, textReply, TEST_KEY, useServers, type Handler } from './fake-server.ts'

const serve = useServers()
const run = (handlers: Handler[], overrides: Record<string, unknown> = {}) => runOnce(serve, handlers, overrides)

const HEADER_SECRET = 'hdr-0123456789-SECRET-HEADER'

describe('secrets against a hostile or careless server', () => {
  it('masks the key when the server echoes the Authorization header in a frame that is not JSON', async () => {
    const { finish, logs } = await run([(res, received) => {
      startSse(res)
      res.end(`data: you sent Authorization: ${received.headers.authorization}\n\n`)
    }])
    expect(finish.error.code).toBe('SERVER')
    expect(finish.error.message).toContain('malformed stream frame')
    expect(JSON.stringify(finish)).not.toContain(TEST_KEY)
    expect(JSON.stringify(logs)).not.toContain(TEST_KEY)
  })

  it('masks the key before cutting a long server message, so no prefix of it survives the cut', async () => {
    for (const status of [400, 500]) {
      const { finish, logs } = await run([jsonError(status, { error: { message: `${'x'.repeat(290)} ${TEST_KEY} more` } })], { maxRetries: 1 })
      expect(finish.error.message).not.toContain(TEST_KEY.slice(0, 8))
      expect(JSON.stringify(logs)).not.toContain(TEST_KEY.slice(0, 8))
    }
  })

  it('masks the values of configured headers (an x-api-key) when the server echoes them', async () => {
    const { finish } = await run([(res, received) => jsonError(401, { error: { message: `bad x-api-key ${received.headers['x-api-key']}` } })(res, received)], {
      headers: { 'x-api-key': HEADER_SECRET },
    })
    expect(finish.error).toMatchObject({ code: 'AUTH', message: 'openai-compatible: HTTP 401: bad x-api-key ***' })
  })

  it('keeps URL credentials out of network error messages and logs', async () => {
    const server = await serve([textReply('never')])
    const settings = { ...settingsFor(server.url), url: server.url.replace('http://', 'http://user:hunter2-pass@') + '/chat/completions', maxRetries: 1, baseDelayMs: 1 }
    const logs: string[] = []
    const logger = { debug: (...args: unknown[]) => logs.push(args.join(' ')), info: (...args: unknown[]) => logs.push(args.join(' ')) }
    const chunks = await collect(createOpenAIProvider(settings, logger).stream(request(), new AbortController().signal))
    const finish = lastOf(chunks) as { error: { code: string; message: string } }
    expect(finish.error.code).toBe('TRANSPORT')
    expect(finish.error.message).toContain('http://user:***@127.0.0.1')
    expect(JSON.stringify(chunks) + logs.join('\n')).not.toContain('hunter2')
    expect(server.received).toHaveLength(0)
  })

  it('does not follow a redirect, so the conversation, key and headers never reach another address', async () => {
    const elsewhere = await serve([textReply('from elsewhere')])
    const { finish, received } = await run([(res) => {
      res.writeHead(307, { location: `${elsewhere.url}/chat/completions` })
      res.end()
    }], { headers: { 'x-api-key': HEADER_SECRET } })
    expect(received).toHaveLength(1)
    expect(elsewhere.received).toHaveLength(0)
    expect(finish.error.code).toBe('BAD_REQUEST')
    expect(finish.error.message).toBe(`openai-compatible: HTTP 307: the server redirects to ${new URL(elsewhere.url).host}; set baseUrl to the final address`)
  })
})

describe('responses that are not an event stream', () => {
  it('reports an HTML page served with 200 as SERVER, naming the content type, without retrying', async () => {
    const { finish, received } = await run([(res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      res.end('<html><body><h1>Please sign in to the proxy</h1></body></html>')
    }])
    expect(received).toHaveLength(1)
    expect(finish.error.code).toBe('SERVER')
    expect(finish.error.message).toBe('openai-compatible: the server answered with text/html; charset=utf-8 instead of an event stream: <html><body><h1>Please sign in to the proxy</h1></body></html>')
  })

  it('maps an error object sent under text/event-stream without "data:" lines by its wording', async () => {
    const { finish, received } = await run([(res) => {
      startSse(res)
      res.end(JSON.stringify({ error: { message: 'Insufficient Balance', type: 'unknown_error' } }))
    }])
    expect(received).toHaveLength(1)
    expect(finish.error).toMatchObject({ code: 'QUOTA', message: expect.stringContaining('Insufficient Balance') })
  })

  it('maps a 200 application/json error body by its message', async () => {
    const { finish, received } = await run([jsonError(200, { error: { message: "This model's maximum context length is 8192 tokens" } })])
    expect(received).toHaveLength(1)
    expect(finish.error).toMatchObject({ code: 'CONTEXT_OVERFLOW', message: expect.stringContaining('maximum context length') })
  })

  it('accepts a real event stream whatever content type it is labelled with', async () => {
    for (const type of [undefined, 'text/plain', 'application/octet-stream']) {
      const { chunks } = await run([(res) => {
        res.writeHead(200, type ? { 'content-type': type } : {})
        res.end(delta({ content: 'fine' }, 'stop'))
      }])
      expect(chunks).toEqual([{ type: 'text', text: 'fine' }, { type: 'finish', reason: 'stop' }])
    }
  })

  it('still retries a stream that ends after only keep-alive comments', async () => {
    const { chunks, received } = await run([(res) => {
      startSse(res)
      res.end(': keep-alive\n\n: keep-alive\n\n')
    }, textReply('second try')])
    expect(received).toHaveLength(2)
    expect(chunks[0]).toEqual({ type: 'text', text: 'second try' })
  })
})
