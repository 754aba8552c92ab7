import { setImmediate, setTimeout } from 'node:timers/promises'

export interface DelayOptions {
  /** Ends the wait early. */
  signal?: AbortSignal
  /** `false` lets the process exit while the delay is pending (an unref'd timer). */
  ref?: boolean
}

/** Resolves true after `ms`, or false as soon as `signal` aborts; the timer and the abort listener are released either way. */
export async function delay(ms: number, options: DelayOptions = {}): Promise<boolean> {
  if (options.signal?.aborted) return false
  try {
    await setTimeout(ms, undefined, options)
    return true
  } catch (error) {
    if (options.signal?.aborted) return false
    throw error
  }
}

/** Resolves after the current macrotask: lets timers, I/O and abort listeners run before going on. */
export const nextMacrotask = (): Promise<void> => setImmediate()
