// Failures of the Messages API, with its recorded error bodies: which are retried, what the caller is told.
import { describe, expect, it } from 'vitest'
import { counted, cut, error, stream } from '@goalkeeper/test-kit'
import { collect, providerFor, request, runOnce, textOf, useReplay } from './helpers.ts'

const serve = useReplay()

describe('model-anthropic errors', () => {
  it('429 waits as long as retry-after says, then answers; the wait is announced', async () => {
    const { chunks, server, retries } = await runOnce(serve, [error(429, 'rate-limit-429.json', { 'retry-after': '1' }), stream('text.sse')])
    expect(textOf(chunks)).toBe('Hello from Claude.')
    expect(server.messages).toHaveLength(2)
    // From the server's own clock: the second request came no sooner than the second asked for.
    expect(server.messages[1].at - server.messages[0].at).toBeGreaterThanOrEqual(990)
    expect(retries).toEqual([{ attempt: 1, of: 3, waitMs: 1000, error: {
      code: 'RATE_LIMIT', retryAfterMs: 1000,
      message: 'anthropic: HTTP 429: rate_limit_error: This request would exceed the rate limit for your organization of 50 requests per minute.',
    } }])
  })

  it('a retry-after beyond maxDelayMs ends the call at once with RATE_LIMIT and the wait', async () => {
    const { finish, server } = await runOnce(serve, [error(429, 'rate-limit-429.json', { 'retry-after': '120' })])
    expect(server.messages).toHaveLength(1)
    expect(finish.error).toMatchObject({ code: 'RATE_LIMIT', retryAfterMs: 120_000 })
  })

  it('529 overloaded and 500 are retried with backoff; a 529 that persists ends SERVER', async () => {
    const ok = await runOnce(serve, [error(529, 'overloaded-529.json'), error(500, 'api-error-500.json'), stream('text.sse')])
    expect(textOf(ok.chunks)).toBe('Hello from Claude.')
    expect(ok.retries.map((retry) => retry.error.code)).toEqual(['SERVER', 'SERVER'])
    const down = await runOnce(serve, [error(529, 'overloaded-529.json')], { maxRetries: 2 })
    expect(down.server.messages).toHaveLength(3)
    expect(down.finish.error).toEqual({ code: 'SERVER', message: 'anthropic: HTTP 529: overloaded_error: Overloaded' })
  })

  it('an overloaded error event before any output is retried like a 529', async () => {
    const { chunks, server } = await runOnce(serve, [stream('overloaded-mid-stream.sse'), stream('text.sse')])
    expect(server.messages).toHaveLength(2)
    expect(textOf(chunks)).toBe('Hello from Claude.')
  })

  it('a connection lost after output began ends TRANSPORT without a retry (the agent loop asks again)', async () => {
    const { chunks, finish, server } = await runOnce(serve, [cut('cut-mid-stream.sse'), stream('text.sse')])
    expect(textOf(chunks)).toBe('Half an ans')
    expect(finish.error?.code).toBe('TRANSPORT')
    expect(server.messages).toHaveLength(1)
  })

  it('a refused key is one line naming the variable to fix, never retried, never quoting the key', async () => {
    const { finish } = await runOnce(serve, [error(401, 'authentication-401.json')])
    expect(finish.error).toEqual({ code: 'AUTH', message: 'anthropic: the API key was refused (HTTP 401: invalid x-api-key); check the configured `apiKey`' })
    const server = await serve([error(401, 'authentication-401.json')])
    const { provider } = providerFor(server.url, {}, { ANTHROPIC_API_KEY: 'sk-ant-from-env-0123456789' })
    const chunks = await collect(provider.stream(request(), new AbortController().signal))
    expect(chunks).toEqual([{ type: 'finish', reason: 'error', error: { code: 'AUTH', message: 'anthropic: the API key was refused (HTTP 401: invalid x-api-key); check ANTHROPIC_API_KEY' } }])
    expect(server.messages).toHaveLength(1)
    const denied = await runOnce(serve, [error(403, 'permission-403.json')])
    expect(denied.finish.error?.code).toBe('AUTH')
    expect(denied.finish.error?.message).toMatch(/^anthropic: the API key may not do this \(HTTP 403: Your API key does not have permission/)
    expect(denied.server.messages).toHaveLength(1)
  })

  it('prompt is too long is CONTEXT_OVERFLOW; spend limits and credit balance are QUOTA; none is retried', async () => {
    const long = await runOnce(serve, [error(400, 'prompt-too-long-400.json')])
    expect(long.finish.error).toEqual({ code: 'CONTEXT_OVERFLOW', message: 'anthropic: HTTP 400: invalid_request_error: prompt is too long: 215000 tokens > 200000 maximum' })
    const spend = await runOnce(serve, [error(429, 'spend-limit-429.json', { 'retry-after': '1' })])
    expect(spend.finish.error?.code).toBe('QUOTA')
    const broke = await runOnce(serve, [error(400, 'billing-400.json')])
    expect(broke.finish.error?.code).toBe('QUOTA')
    for (const result of [long, spend, broke]) expect(result.server.messages).toHaveLength(1)
  })

  it('a network failure before any answer is retried; an abort ends ABORTED at once', async () => {
    const { provider, retries } = providerFor('http://127.0.0.1:1', { maxRetries: 1 })
    const chunks = await collect(provider.stream(request(), new AbortController().signal))
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', reason: 'error', error: { code: 'TRANSPORT', message: expect.stringMatching(/^anthropic: cannot reach 127\.0\.0\.1:1: /) } })
    expect(retries.map((retry) => retry.error.code)).toEqual(['TRANSPORT'])
    const controller = new AbortController()
    controller.abort()
    const aborted = await collect(provider.stream(request(), controller.signal))
    expect(aborted).toEqual([{ type: 'finish', reason: 'error', error: { code: 'ABORTED', message: 'anthropic: request aborted' } }])
  })

  it('counts tokens with the count-tokens endpoint, and gives up to the estimate when it fails', async () => {
    const server = await serve([stream('text.sse')], counted(12_345))
    const { provider } = providerFor(server.url)
    expect(await provider.countTokens!(request({ system: 'Be brief.' }), new AbortController().signal)).toBe(12_345)
    expect(server.counts[0].body).toMatchObject({ model: 'claude-sonnet-4-6', system: [{ type: 'text', text: 'Be brief.' }], messages: [{ role: 'user' }] })
    const none = await serve([stream('text.sse')])
    const { provider: failing, logs } = providerFor(none.url)
    expect(await failing.countTokens!(request(), new AbortController().signal)).toBeUndefined()
    expect(logs.join('\n')).toContain('token count failed, the estimate stands')
  })
})
