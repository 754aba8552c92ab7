import { describe, expect, it } from 'vitest'
import { costOf, tokensOf } from '../src/index.ts'

const claude = { summary: 'anthropic', offline: false, vendor: 'anthropic', model: 'claude-sonnet-4-6' }
// 100k input tokens of which 60k written to the cache and 30k read from it, and 1k output.
const usage = { inputTokens: 100_000, cacheWriteInputTokens: 60_000, cachedInputTokens: 30_000, outputTokens: 1_000 }

describe('prompt cache prices', () => {
  it('cache writes and reads are priced at their own rates from the bundled table', () => {
    // claude-sonnet-4-6: $3/M input, $3.75/M cache writes, $0.30/M cache reads, $15/M output.
    expect(costOf(claude, usage, {})).toBeCloseTo((10_000 * 3 + 60_000 * 3.75 + 30_000 * 0.3 + 1_000 * 15) / 1e6, 9)
    // The same call with nothing written costs less: writes are dearer than plain input.
    expect(costOf(claude, { ...usage, cacheWriteInputTokens: 0 }, {})!).toBeLessThan(costOf(claude, usage, {})!)
  })

  it('a configured price has its own cache write rate, plain input when unset', () => {
    const prices = { 'anthropic/claude-sonnet-4-6': { input: 2, cachedInput: 0.2, cacheWriteInput: 2.5, output: 10 } }
    expect(costOf(claude, usage, prices)).toBeCloseTo((10_000 * 2 + 60_000 * 2.5 + 30_000 * 0.2 + 1_000 * 10) / 1e6, 9)
    const plain = { 'anthropic/claude-sonnet-4-6': { input: 2, output: 10 } }
    expect(costOf(claude, usage, plain)).toBeCloseTo((100_000 * 2 + 1_000 * 10) / 1e6, 9)
  })

  it('cache writes count as input tokens for budgets, reads do not', () => {
    expect(tokensOf(usage)).toBe(71_000)
  })
})
