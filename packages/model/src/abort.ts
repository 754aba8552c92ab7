/** Resolves true after `ms`, or false as soon as `signal` aborts (timer and listener are released either way). */
export function delay(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false)
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer)
      resolve(false)
    }
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve(true)
    }, ms)
    signal.addEventListener('abort', onAbort, { once: true })
  })
}

/** Settles with `promise`, or with `undefined` once `signal` aborts (whichever comes first). */
export function untilAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<{ value: T } | undefined> {
  if (signal.aborted) return Promise.resolve(undefined)
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(undefined)
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(
      (value) => { signal.removeEventListener('abort', onAbort); resolve({ value }) },
      (error) => { signal.removeEventListener('abort', onAbort); reject(error) },
    )
  })
}

/** Gives other tasks (and an abort) a chance to run between streamed chunks. */
export const nextMacrotask = () => new Promise<void>((resolve) => setImmediate(resolve))
