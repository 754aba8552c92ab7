import { describe, expect, it } from 'vitest'
import { costOf, priceKey, priceKnown, tokensOf } from '../src/index.ts'

const remote = (vendor: string, model: string) => ({ summary: `${vendor} ${model}`, offline: false, vendor, model })
const million = { inputTokens: 1_000_000, cachedInputTokens: 200_000, outputTokens: 1_000_000 }

describe('prices', () => {
  it('the presets\' default models are priced from the bundled @pydantic/genai-prices table, cached input at its own rate', () => {
    const openai = costOf(remote('openai', 'gpt-4o-mini'), million, {})!
    const deepseek = costOf(remote('deepseek', 'deepseek-chat'), million, {})!
    expect(openai).toBeGreaterThan(0)
    expect(deepseek).toBeGreaterThan(0)
    // Cached input is cheaper: the same call without a cache hit costs more.
    expect(costOf(remote('openai', 'gpt-4o-mini'), { ...million, cachedInputTokens: 0 }, {})!).toBeGreaterThan(openai)
  })

  it('an unknown model, a provider that does not say, or a missing usage report is unknown (null), never 0', () => {
    expect(costOf(remote('openai', 'no-such-model'), million, {})).toBeNull()
    expect(costOf({ summary: 'x', offline: false }, million, {})).toBeNull()
    expect(costOf(remote('openai', 'gpt-4o-mini'), undefined, {})).toBeNull()
  })

  it('an offline provider costs 0; a configured price wins over the table', () => {
    expect(costOf({ summary: 'scripted', offline: true }, million, {})).toBe(0)
    expect(costOf({ summary: 'scripted', offline: true }, undefined, {})).toBe(0)
    expect(costOf(remote('openai', 'gpt-4o-mini'), million, { 'openai/gpt-4o-mini': { input: 1, output: 3 } })).toBeCloseTo(4, 10)
    expect(costOf(remote('openai', 'gpt-4o-mini'), million, { 'openai/gpt-4o-mini': { input: 1, cachedInput: 0.5, output: 3 } })).toBeCloseTo(0.8 + 0.1 + 3, 10)
    expect(priceKey(remote('deepseek', 'deepseek-chat'))).toBe('deepseek/deepseek-chat')
  })

  it('a failed call without a usage report costs 0; with one, what it reported', () => {
    expect(costOf(remote('acme', 'mystery'), undefined, {}, { failed: true })).toBe(0)
    expect(costOf(remote('openai', 'gpt-4o-mini'), undefined, {}, { failed: true })).toBe(0)
    expect(costOf(remote('openai', 'gpt-4o-mini'), million, {}, { failed: true })).toBe(costOf(remote('openai', 'gpt-4o-mini'), million, {}))
  })

  it('priceKnown: a configured price, an offline provider or the bundled table', () => {
    expect(priceKnown(remote('openai', 'gpt-4o-mini'), {})).toBe(true)
    expect(priceKnown({ summary: 'scripted', offline: true }, {})).toBe(true)
    expect(priceKnown(remote('local', 'llama3'), {})).toBe(false)
    expect(priceKnown(remote('local', 'llama3'), { 'local/llama3': { input: 0, output: 0 } })).toBe(true)
    expect(priceKnown({ summary: 'x', offline: false }, {})).toBe(false)
  })

  it('tokens are input minus cached input plus output', () => {
    expect(tokensOf({ inputTokens: 700, cachedInputTokens: 200, outputTokens: 100, reasoningTokens: 40 })).toBe(600)
    expect(tokensOf({ inputTokens: 10, outputTokens: 5 })).toBe(15)
    expect(tokensOf(undefined)).toBe(0)
  })
})
