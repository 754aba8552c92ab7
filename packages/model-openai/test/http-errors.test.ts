import { describe, expect, it } from 'vitest'
import { frame, jsonError, lastOf, runOnce, sse, textReply, useServers, type Handler } from './fake-server.ts'
import { OVERFLOW_BODIES } from '@goalkeeper/test-kit'

const serve = useServers()
const run = (handlers: Handler[], overrides: Record<string, unknown> = {}) => runOnce(serve, handlers, overrides)

const gaps = (received: { at: number }[]) => received.slice(1).map((entry, i) => entry.at - received[i].at)

describe('HTTP errors and retries', () => {
  it('waits for Retry-After seconds on 429, then succeeds', async () => {
    const { chunks, received, logs } = await run([jsonError(429, { error: { message: 'Rate limit reached' } }, { 'retry-after': '1' }), textReply('hi')])
    expect(chunks).toEqual([{ type: 'text', text: 'hi' }, { type: 'finish', reason: 'stop' }])
    expect(received).toHaveLength(2)
    expect(gaps(received)[0]).toBeGreaterThanOrEqual(990)
    expect(logs.some((line) => line.level === 'info' && /HTTP 429.*retry 1 of 3 in 1000 ms/.test(line.text))).toBe(true)
  })

  it('honours retry-after-ms over retry-after', async () => {
    const { chunks, received } = await run([jsonError(429, { error: { message: 'slow down' } }, { 'retry-after-ms': '250', 'retry-after': '20' }), textReply('hi')])
    expect(lastOf(chunks)).toEqual({ type: 'finish', reason: 'stop' })
    const [gap] = gaps(received)
    expect(gap).toBeGreaterThanOrEqual(245)
    expect(gap).toBeLessThan(2000)
  })

  it('gives up with RATE_LIMIT after maxRetries, with bounded jittered backoff', async () => {
    const { finish, received } = await run([jsonError(429, { error: { message: 'Rate limit reached for requests' } })], { maxRetries: 2, baseDelayMs: 40 })
    expect(received).toHaveLength(3)
    expect(finish).toMatchObject({ type: 'finish', reason: 'error', error: { code: 'RATE_LIMIT' } })
    expect(finish.error.message).toBe('openai-compatible: HTTP 429: Rate limit reached for requests')
    // random() is pinned to 0.5: delays are 3/4 of 40 and of 80 ms.
    const [first, second] = gaps(received)
    expect(first).toBeGreaterThanOrEqual(29)
    expect(second).toBeGreaterThanOrEqual(59)
  })

  it('reports a Retry-After longer than maxDelayMs at once instead of waiting', async () => {
    const { finish, received } = await run([jsonError(429, { error: { message: 'later' } }, { 'retry-after': '120' })])
    expect(received).toHaveLength(1)
    expect(finish.error).toMatchObject({ code: 'RATE_LIMIT', retryAfterMs: 120_000 })
  })

  it('reports an absurd Retry-After as 30 days, a finite number that survives JSON', async () => {
    const { finish, received } = await run([jsonError(429, { error: { message: 'later' } }, { 'retry-after': '9'.repeat(400) })])
    expect(received).toHaveLength(1)
    expect(finish.error).toMatchObject({ code: 'RATE_LIMIT', retryAfterMs: 2_592_000_000 })
    expect(JSON.parse(JSON.stringify(finish)).error.retryAfterMs).toBe(2_592_000_000)
  })

  it('falls back to its own backoff for a negative or garbage Retry-After, instead of retrying at once', async () => {
    const { chunks, received } = await run([
      jsonError(429, { error: { message: 'slow down' } }, { 'retry-after': '-5' }),
      jsonError(429, { error: { message: 'slow down' } }, { 'retry-after': 'soon' }),
      textReply('hi'),
    ], { baseDelayMs: 100 })
    expect(lastOf(chunks)).toEqual({ type: 'finish', reason: 'stop' })
    // random() is pinned to 0.5: backoff delays are 3/4 of 100 and of 200 ms.
    const [first, second] = gaps(received)
    expect(first).toBeGreaterThanOrEqual(70)
    expect(second).toBeGreaterThanOrEqual(145)
  })

  it('maps 402 to QUOTA without retrying', async () => {
    const { finish, received } = await run([jsonError(402, { error: { message: 'Insufficient Balance', type: 'unknown_error' } })])
    expect(received).toHaveLength(1)
    expect(finish.error).toMatchObject({ code: 'QUOTA', message: expect.stringMatching(/HTTP 402: Insufficient Balance/) })
  })

  it('maps a body saying insufficient quota to QUOTA even on 429, without retrying', async () => {
    const { finish, received } = await run([jsonError(429, { error: { message: 'You exceeded your current quota, please check your plan and billing details.', type: 'insufficient_quota', code: 'insufficient_quota' } })])
    expect(received).toHaveLength(1)
    expect(finish.error.code).toBe('QUOTA')
  })

  it('maps 401 and 403 to AUTH without retrying', async () => {
    const first = await run([jsonError(401, { error: { message: 'Authentication Fails, Your api key is invalid' } })])
    expect(first.received).toHaveLength(1)
    expect(first.finish.error).toMatchObject({ code: 'AUTH', message: 'openai-compatible: HTTP 401: Authentication Fails, Your api key is invalid' })
    const second = await run([jsonError(403, 'Forbidden')])
    expect(second.finish.error).toMatchObject({ code: 'AUTH', message: 'openai-compatible: HTTP 403: Forbidden' })
  })

  it('maps 400 with context-length wording to CONTEXT_OVERFLOW', async () => {
    const { finish, received } = await run([jsonError(400, { error: { message: "This model's maximum context length is 65536 tokens. However, you requested 70000 tokens.", code: 'context_length_exceeded' } })])
    expect(received).toHaveLength(1)
    expect(finish.error.code).toBe('CONTEXT_OVERFLOW')
    expect(finish.error.message).toMatch(/^openai-compatible: HTTP 400: This model's maximum context length is 65536/)
  })

  it.for(OVERFLOW_BODIES)('classifies the refusal of $server as CONTEXT_OVERFLOW with the figures it states', async ({ status, body, contextLimit, requestTokens }) => {
    const { finish, received } = await run([jsonError(status, body)])
    expect(received).toHaveLength(1)
    expect(finish.error.code).toBe('CONTEXT_OVERFLOW')
    expect(finish.error.contextLimit).toBe(contextLimit)
    expect(finish.error.requestTokens).toBe(requestTokens)
  })

  it('an error frame inside the stream with a refusal as too long carries the figures too', async () => {
    const { finish } = await run([sse(frame({ error: { message: "This model's maximum context length is 8192 tokens. However, you requested 9100 tokens (8100 in the messages, 1000 in the completion)." } }))])
    expect(finish.error).toMatchObject({ code: 'CONTEXT_OVERFLOW', contextLimit: 8192, requestTokens: 8100 })
  })

  it('maps other 400, 404 and 422 to BAD_REQUEST', async () => {
    for (const status of [400, 404, 422]) {
      const { finish, received } = await run([jsonError(status, { error: { message: 'Model Not Exist' } })])
      expect(received).toHaveLength(1)
      expect(finish.error).toMatchObject({ code: 'BAD_REQUEST', message: `openai-compatible: HTTP ${status}: Model Not Exist` })
    }
  })

  it('retries a 500 and succeeds', async () => {
    const { chunks, received } = await run([jsonError(500, { error: { message: 'internal' } }), jsonError(503, 'upstream unavailable'), textReply('fine')])
    expect(received).toHaveLength(3)
    expect(chunks).toEqual([{ type: 'text', text: 'fine' }, { type: 'finish', reason: 'stop' }])
  })

  it('reports SERVER after the retries run out, with a truncated server message', async () => {
    const { finish, received } = await run([jsonError(500, 'x'.repeat(5000))], { maxRetries: 1 })
    expect(received).toHaveLength(2)
    expect(finish.error.code).toBe('SERVER')
    expect(finish.error.message.length).toBeLessThan(400)
    expect(finish.error.message).toMatch(/^openai-compatible: HTTP 500: x+…$/)
  })
})
