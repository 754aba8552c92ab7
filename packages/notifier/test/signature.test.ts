import { describe, expect, it } from 'vitest'
import { createHmac } from 'node:crypto'
import { loggedUrl, nextWait, retryAfterMs, retryable, sign, signingKey, urlProblem } from '../src/index.ts'

describe('signature', () => {
  it('matches the Standard Webhooks test vector for a whsec_ secret', () => {
    const key = signingKey('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')
    expect(sign(key, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=')
  })

  it('uses a secret without the prefix as its UTF-8 bytes', () => {
    const expected = createHmac('sha256', 'a passphrase of mine').update('msg_1.1700000000.{}').digest('base64')
    expect(sign(signingKey('a passphrase of mine'), 'msg_1', 1700000000, '{}')).toBe(`v1,${expected}`)
  })

  it('refuses a whsec_ secret whose rest is not base64', () => {
    expect(() => signingKey('whsec_not base64!')).toThrow(/not base64/)
    expect(() => signingKey('whsec_')).toThrow(/not base64/)
  })
})

describe('backoff', () => {
  const config = { backoffMs: 1000, maxBackoffMs: 60_000 }
  const status = (value: number, retryAfter?: string) => ({ kind: 'response' as const, status: value, ...(retryAfter && { retryAfter }) })

  it('retries 5xx, 429, timeouts and network errors, never another 4xx', () => {
    expect([500, 503, 429, 400, 401, 404, 410, 302].map((code) => retryable(status(code)))).toEqual([true, true, true, false, false, false, false, false])
    expect(retryable({ kind: 'timeout' })).toBe(true)
    expect(retryable({ kind: 'network', message: 'ECONNREFUSED' })).toBe(true)
    expect(retryable({ kind: 'aborted' })).toBe(false)
  })

  it('doubles the wait per attempt, with jitter between half and all of it, up to maxBackoffMs', () => {
    expect([1, 2, 3].map((attempt) => nextWait({ kind: 'timeout' }, attempt, config, () => 0))).toEqual([{ waitMs: 500 }, { waitMs: 1000 }, { waitMs: 2000 }])
    expect([1, 2, 3].map((attempt) => nextWait({ kind: 'timeout' }, attempt, config, () => 1))).toEqual([{ waitMs: 1000 }, { waitMs: 2000 }, { waitMs: 4000 }])
    expect(nextWait(status(500), 20, config, () => 1)).toEqual({ waitMs: 60_000 })
  })

  it('honours Retry-After in seconds or as a date, and gives up on one beyond maxBackoffMs', () => {
    expect(nextWait(status(429, '7'), 1, config, () => 0)).toEqual({ waitMs: 7000 })
    const now = Date.parse('2026-12-01T12:00:00Z')
    expect(retryAfterMs('Tue, 01 Dec 2026 12:00:30 GMT', now)).toBe(30_000)
    expect(retryAfterMs('soon', now)).toBeUndefined()
    expect(nextWait(status(503, '3600'), 1, config)).toEqual({ giveUp: expect.stringMatching(/retry after 3600 s, beyond maxBackoffMs/) })
  })
})

describe('urls', () => {
  it('logs scheme, host and path only: no credentials, query or fragment', () => {
    expect(loggedUrl('https://user:pa55word@hooks.example.com:8443/in/abc?token=s3cret#x')).toBe('https://hooks.example.com:8443/in/abc')
  })

  it('takes absolute http and https URLs only', () => {
    expect(urlProblem('https://example.com/hook')).toBeUndefined()
    expect(urlProblem('example.com/hook')).toMatch(/not an absolute URL/)
    expect(urlProblem('ftp://example.com/hook')).toMatch(/only http and https/)
  })
})
