export type Settled<T> =
  | { kind: 'value'; value: T }
  | { kind: 'error'; error: unknown }
  | { kind: 'timeout' }
  | { kind: 'abandoned' }

/**
 * Starts `work` synchronously (so a listener it reaches runs in the caller's tick) and settles with
 * its outcome, a timeout or the abort of any signal, whichever comes first. Nothing is left behind:
 * the timer and the abort listeners are removed as soon as it settles.
 */
export function settle<T>(work: () => T | PromiseLike<T>, timeoutMs: number, signals: AbortSignal[]): Promise<Settled<T>> {
  return new Promise((resolve) => {
    let done = false
    const finish = (outcome: Settled<T>) => {
      if (done) return
      done = true
      clearTimeout(timer)
      for (const signal of signals) signal.removeEventListener('abort', abandon)
      resolve(outcome)
    }
    const abandon = () => finish({ kind: 'abandoned' })
    const timer = setTimeout(() => finish({ kind: 'timeout' }), timeoutMs)
    for (const signal of signals) {
      if (signal.aborted) return abandon()
      signal.addEventListener('abort', abandon)
    }
    try {
      Promise.resolve(work()).then((value) => finish({ kind: 'value', value }), (error) => finish({ kind: 'error', error }))
    } catch (error) {
      finish({ kind: 'error', error })
    }
  })
}
