import type { Usage } from '@goalkeeper/session'

const count = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined

/** The API's usage fields as they stand so far (message_start, then message_delta's cumulative counts). */
export interface WireUsage {
  input_tokens?: number
  output_tokens?: number
  cache_creation_input_tokens?: number | null
  cache_read_input_tokens?: number | null
}

/** Later fields win: message_delta repeats what changed, cumulatively. */
export const mergeUsage = (into: WireUsage, raw: unknown): WireUsage => {
  if (!raw || typeof raw !== 'object') return into
  const wire = raw as Record<string, unknown>
  const merged = { ...into }
  for (const key of ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens'] as const) {
    const value = count(wire[key])
    if (value !== undefined) merged[key] = value
  }
  return merged
}

/**
 * The API's `input_tokens` counts only what follows the last cache breakpoint; goalkeeper's `inputTokens` is
 * every input token, with the cached reads and writes as parts of it (as OpenAI reports them).
 */
export const toUsage = (wire: WireUsage): Usage => {
  const read = wire.cache_read_input_tokens ?? 0
  const written = wire.cache_creation_input_tokens ?? 0
  const usage: Usage = { inputTokens: (wire.input_tokens ?? 0) + read + written, outputTokens: wire.output_tokens ?? 0 }
  if (wire.cache_read_input_tokens != null) usage.cachedInputTokens = read
  if (wire.cache_creation_input_tokens != null) usage.cacheWriteInputTokens = written
  return usage
}

/** Two calls of one answer (a `pause_turn` continuation) as one. */
export const addUsage = (a: Usage | undefined, b: Usage): Usage => {
  if (!a) return b
  const sum: Usage = { inputTokens: a.inputTokens + b.inputTokens, outputTokens: a.outputTokens + b.outputTokens }
  if (a.cachedInputTokens !== undefined || b.cachedInputTokens !== undefined) sum.cachedInputTokens = (a.cachedInputTokens ?? 0) + (b.cachedInputTokens ?? 0)
  if (a.cacheWriteInputTokens !== undefined || b.cacheWriteInputTokens !== undefined) sum.cacheWriteInputTokens = (a.cacheWriteInputTokens ?? 0) + (b.cacheWriteInputTokens ?? 0)
  return sum
}
