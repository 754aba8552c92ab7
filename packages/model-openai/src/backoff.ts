/**
 * Exponential backoff with "equal jitter": half the delay is fixed, half random, so that
 * clients failing together spread out but never retry at once.
 */
export const backoffDelay = (retry: number, baseMs: number, maxMs: number, random: () => number = Math.random): number => {
  const ceiling = Math.min(maxMs, baseMs * 2 ** retry)
  return Math.round(ceiling / 2 + random() * (ceiling / 2))
}
