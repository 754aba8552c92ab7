import type { ModelProvider, ModelRequest } from '@goalkeeper/model'

/**
 * Below this share of the limit the estimate decides alone: a provider's count may cost a request, and an
 * estimate this far under the limit is not wrong enough to matter (it errs high for English and code).
 */
const ASK_ABOVE_SHARE = 0.5

/**
 * The input tokens of `request` for a compaction decision against `limit`: the provider's exact count when it
 * offers one and the estimate comes near the limit, else the estimate.
 */
export async function countRequest(provider: ModelProvider, request: ModelRequest, signal: AbortSignal, estimate: number, limit: number): Promise<number> {
  if (!provider.countTokens || estimate < ASK_ABOVE_SHARE * limit) return estimate
  try {
    const counted = await provider.countTokens(request, signal)
    return typeof counted === 'number' && Number.isFinite(counted) && counted >= 0 ? counted : estimate
  } catch {
    // The contract says never throw; a provider that does still leaves the estimate.
    return estimate
  }
}
