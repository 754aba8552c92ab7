import { describe, expect, it } from 'vitest'
import { backoffDelay } from '../src/backoff.ts'
import { createMasker } from '@goalkeeper/kit'
import { httpFailure, parseRetryAfter } from '../src/errors.ts'
import { mapUsage } from '../src/usage.ts'
import { ToolCallAssembler } from '../src/tool-call-assembler.ts'

describe('helpers', () => {
  it('parses Retry-After as seconds, as an HTTP date, and retry-after-ms', () => {
    const now = Date.parse('2025-01-01T00:00:00Z')
    expect(parseRetryAfter(new Headers({ 'retry-after': '3' }), now)).toBe(3000)
    expect(parseRetryAfter(new Headers({ 'retry-after': '0.5' }), now)).toBe(500)
    expect(parseRetryAfter(new Headers({ 'retry-after': 'Wed, 01 Jan 2025 00:00:07 GMT' }), now)).toBe(7000)
    expect(parseRetryAfter(new Headers({ 'retry-after': 'Tue, 31 Dec 2024 23:59:00 GMT' }), now)).toBe(0)
    expect(parseRetryAfter(new Headers({ 'retry-after-ms': '1234.2', 'retry-after': '9' }), now)).toBe(1235)
    expect(parseRetryAfter(new Headers({ 'retry-after': 'soon' }), now)).toBeUndefined()
    expect(parseRetryAfter(new Headers(), now)).toBeUndefined()
  })

  it('keeps backoff within [ceiling/2, ceiling] and under the cap', () => {
    expect(backoffDelay(0, 100, 10_000, () => 0)).toBe(50)
    expect(backoffDelay(0, 100, 10_000, () => 1)).toBe(100)
    expect(backoffDelay(3, 100, 10_000, () => 0.5)).toBe(600)
    expect(backoffDelay(20, 100, 10_000, () => 1)).toBe(10_000)
  })

  it('never lets the key through, even when the server echoes it', () => {
    const key = 'sk-live-abcdefghijklmnop'
    const masker = createMasker({ env: {}, values: [key] })
    expect(masker.mask(`Incorrect API key provided: ${key}.`)).toBe('Incorrect API key provided: ***.')
    expect(masker.mask('key sk-proj-QWERTYUIOPASDF is invalid')).toBe('key sk-pr*** is invalid')
    expect(masker.mask('header was Bearer abc.def-123')).toBe('header was Bearer ***')
    const failure = httpFailure('openai', 401, JSON.stringify({ error: { message: `bad key ${key}` } }), new Headers(), masker)
    expect(failure.error.message).toBe('openai: HTTP 401: bad key ***')
  })

  it('maps usage leniently', () => {
    expect(mapUsage(undefined)).toBeUndefined()
    expect(mapUsage({ prompt_tokens: 3 })).toEqual({ inputTokens: 3, outputTokens: 0 })
    expect(mapUsage({ prompt_tokens: 3, completion_tokens: 2, prompt_tokens_details: null })).toEqual({ inputTokens: 3, outputTokens: 2 })
  })

  it('assembles tool calls from servers that omit the index or repeat the name', () => {
    const assembler = new ToolCallAssembler()
    assembler.add({ id: 'a', function: { name: 'first', arguments: '{"x":' } })
    assembler.add({ function: { name: 'first', arguments: '1}' } })
    assembler.add({ id: 'b', function: { name: 'sec' } })
    assembler.add({ function: { name: 'ond', arguments: '{}' } })
    expect(assembler.drain()).toEqual([
      { id: 'a', name: 'first', arguments: '{"x":1}' },
      { id: 'b', name: 'second', arguments: '{}' },
    ])
    assembler.add({ index: 0, function: { name: 'anon', arguments: '{}' } })
    const [generated] = assembler.drain()
    expect(generated.id).toMatch(/^call_[0-9a-f]{24}$/)
  })
})

describe('Retry-After from a hostile server', () => {
  const now = Date.parse('2025-01-01T00:00:00Z')
  const parse = (headers: Record<string, string>) => parseRetryAfter(new Headers(headers), now)

  it('clamps huge values to 30 days instead of Infinity or years; a reset 30 h away reads as 30 h', () => {
    const day = 30 * 24 * 60 * 60 * 1000
    expect(parse({ 'retry-after': '9'.repeat(400) })).toBe(day)
    expect(parse({ 'retry-after': '99999999999' })).toBe(day)
    expect(parse({ 'retry-after-ms': '1e308' })).toBe(day)
    expect(parse({ 'retry-after-ms': '1e400' })).toBe(day)
    expect(parse({ 'retry-after': 'Fri, 01 Jan 2100 00:00:00 GMT' })).toBe(day)
    expect(parse({ 'retry-after': '86399' })).toBe(86_399_000)
    expect(parse({ 'retry-after': '108000' })).toBe(108_000_000)
    expect(parse({ 'retry-after-ms': '108000000' })).toBe(108_000_000)
    expect(parse({ 'retry-after': 'Thu, 02 Jan 2025 06:00:00 GMT' })).toBe(30 * 3_600_000)
  })

  it('ignores negative and garbage values', () => {
    for (const value of ['-5', '-1', '1e3', '0x10', 'soon', '5 seconds', '2025-01-01', 'NaN', 'Infinity', '']) {
      expect(parse({ 'retry-after': value })).toBeUndefined()
    }
    for (const value of ['-100', 'abc', 'Infinity', '0x10']) {
      expect(parse({ 'retry-after-ms': value })).toBeUndefined()
    }
    // A garbage retry-after-ms falls back to a valid retry-after.
    expect(parse({ 'retry-after-ms': '-1', 'retry-after': '2' })).toBe(2000)
  })
})
