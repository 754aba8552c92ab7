import type { Context, Events } from 'cordis'
import { isRecord } from '@goalkeeper/kit'
import type { Agent } from '@goalkeeper/agent-loop'
import type { PolicyVerdict } from './types.ts'

/** How a verdict wait ended: the first listener's answer (undefined when nobody answered) or failure, the timeout, or abandonment. */
export type VerdictOutcome<T> = { value: T | undefined } | { error: unknown } | 'timeout' | 'abandoned'

export interface VerdictWait<T> {
  /** Settles with the first outcome; any later one is ignored. */
  readonly outcome: Promise<VerdictOutcome<T>>
  /** Ends the wait as abandoned (nothing happens once it has ended). */
  abandon(): void
}

export interface VerdictOptions {
  timeoutMs: number
  /** The agent the verdict is about: its cancel or disposal abandons the wait. */
  agent?: Agent
}

type Answer<K extends keyof Events> = NonNullable<Awaited<ReturnType<Events[K]>>>

/**
 * Asks `name` as an awaited bail (`ctx.serial`: listeners in order, the first non-nullish answer wins)
 * and ends with the first of: the answer, a listener's failure, `timeoutMs` elapsing, or abandonment.
 * The wait is abandoned by `abandon()`, by a cancel or disposal of `options.agent`, and when the plugin
 * owning `ctx` unloads: the timer and listeners are an effect of `ctx`, so none outlives the plugin, and
 * each is released as soon as the wait ends.
 */
export function awaitVerdict<K extends keyof Events>(ctx: Context, name: K, args: Parameters<Events[K]>, options: VerdictOptions): VerdictWait<Answer<K>> {
  let resolve!: (outcome: VerdictOutcome<Answer<K>>) => void
  const outcome = new Promise<VerdictOutcome<Answer<K>>>((r) => (resolve = r))
  let ended = false
  let release: (() => void) | undefined
  const end = (result: VerdictOutcome<Answer<K>>) => {
    if (ended) return
    ended = true
    resolve(result)
    release?.()
  }
  const { agent, timeoutMs } = options
  try {
    release = ctx.effect(function* () {
      const timer = setTimeout(() => end('timeout'), timeoutMs)
      yield () => clearTimeout(timer)
      if (agent) {
        yield ctx.on('agent/cancel-requested', (target) => { if (target === agent) end('abandoned') })
        yield ctx.on('agent/disposed', (target) => { if (target === agent) end('abandoned') })
      }
      // Runs first when the plugin unloads.
      yield () => end('abandoned')
    }, `${String(name)} verdict`)
  } catch {
    // The plugin is no longer active: nobody is left to act on an answer.
    end('abandoned')
    return { outcome, abandon: () => {} }
  }
  const serial = ctx.serial as (name: K, ...args: Parameters<Events[K]>) => Promise<Answer<K> | undefined>
  serial.call(ctx, name, ...args).then((value) => end({ value }), (error: unknown) => end({ error }))
  return { outcome, abandon: () => end('abandoned') }
}

/** Whether an answer is a well-formed verdict (answers come from third-party listeners). */
export const isVerdict = (value: unknown): value is PolicyVerdict =>
  isRecord(value) && (value.action === 'continue' || value.action === 'stop')
