import type { PostResult } from './post.ts'

export interface BackoffConfig {
  /** Wait before the first retry, in ms; each later one doubles it. */
  backoffMs: number
  /** No wait is longer; a Retry-After beyond it gives up. */
  maxBackoffMs: number
}

/** Worth trying again: the receiver is down or busy (5xx, 429), or no answer came. Other 4xx will not change. */
export function retryable(result: PostResult): boolean {
  if (result.kind === 'response') return result.status >= 500 || result.status === 429
  return result.kind === 'timeout' || result.kind === 'network'
}

/** Retry-After as ms from `now`: delay-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined
  const text = value.trim()
  if (/^\d+$/.test(text)) return Number(text) * 1000
  const at = Date.parse(text)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}

/**
 * How long to wait before attempt `attempt + 1`: the receiver's Retry-After when it gave one (429, 503),
 * else exponential backoff with jitter (half to all of the doubled wait, so many senders do not come back
 * in step). `give-up` when the receiver asks for a wait longer than `maxBackoffMs`.
 */
export function nextWait(result: PostResult, attempt: number, config: BackoffConfig, random = Math.random): { waitMs: number } | { giveUp: string } {
  const asked = result.kind === 'response' ? retryAfterMs(result.retryAfter) : undefined
  if (asked !== undefined) {
    if (asked > config.maxBackoffMs) return { giveUp: `the receiver asked to retry after ${Math.ceil(asked / 1000)} s, beyond maxBackoffMs (${config.maxBackoffMs} ms)` }
    return { waitMs: asked }
  }
  const full = Math.min(config.maxBackoffMs, config.backoffMs * 2 ** (attempt - 1))
  return { waitMs: Math.round(full / 2 + random() * (full / 2)) }
}
