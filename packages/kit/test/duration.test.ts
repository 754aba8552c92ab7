import { describe, expect, it } from 'vitest'
import { parseDuration } from '../src/index.ts'

describe('parseDuration', () => {
  it('reads units and their sums', () => {
    expect(parseDuration('30m')).toBe(1_800_000)
    expect(parseDuration('1h30m')).toBe(5_400_000)
    expect(parseDuration(' 90S ')).toBe(90_000)
    expect(parseDuration('1.5h')).toBe(5_400_000)
    expect(parseDuration('250ms')).toBe(250)
    expect(parseDuration('2d')).toBe(172_800_000)
  })

  it('refuses a bare number, an unknown unit, zero and trailing text', () => {
    for (const text of ['30', '30 minutes', '0m', '', 'm', '1h 30m', '-5m', '5m!']) expect(parseDuration(text), text).toBeUndefined()
  })
})
