import type { Usage } from '@goalkeeper/session'

interface WireUsage {
  prompt_tokens?: number
  completion_tokens?: number
  prompt_tokens_details?: { cached_tokens?: number } | null
  completion_tokens_details?: { reasoning_tokens?: number } | null
  /** DeepSeek's name for cached prompt tokens. */
  prompt_cache_hit_tokens?: number
}

const count = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined

export const mapUsage = (raw: unknown): Usage | undefined => {
  if (!raw || typeof raw !== 'object') return undefined
  const wire = raw as WireUsage
  const usage: Usage = {
    inputTokens: count(wire.prompt_tokens) ?? 0,
    outputTokens: count(wire.completion_tokens) ?? 0,
  }
  const cached = count(wire.prompt_tokens_details?.cached_tokens) ?? count(wire.prompt_cache_hit_tokens)
  if (cached !== undefined) usage.cachedInputTokens = cached
  const reasoning = count(wire.completion_tokens_details?.reasoning_tokens)
  if (reasoning !== undefined) usage.reasoningTokens = reasoning
  return usage
}
