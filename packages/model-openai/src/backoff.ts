/**
 * Exponential backoff with "equal jitter": half the delay is fixed, half random, so that
 * clients failing together spread out but never retry at once.
 */
export const backoffDelay = (retry: number, baseMs: number, maxMs: number, random: () => number = Math.random): number => {
  const ceiling = Math.min(maxMs, baseMs * 2 ** retry)
  return Math.round(ceiling / 2 + random() * (ceiling / 2))
}

/** Resolves after `ms`, or at once when the signal aborts (the caller checks the signal). */
export const sleep = (ms: number, signal: AbortSignal): Promise<void> => new Promise((resolve) => {
  if (signal.aborted) return resolve()
  const done = () => {
    clearTimeout(timer)
    signal.removeEventListener('abort', done)
    resolve()
  }
  const timer = setTimeout(done, ms)
  signal.addEventListener('abort', done, { once: true })
})
