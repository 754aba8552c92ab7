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
