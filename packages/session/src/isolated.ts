import type { Context, Events } from 'cordis'

/**
 * Dispatches an event so that every listener runs and a throw or rejection is logged and contained
 * (DESIGN.md section 2: events called "isolated"). Cordis's `emit` stops at the first throwing listener
 * and leaks async rejections; `parallel` starts every listener synchronously and gathers failures.
 * Listeners start before this returns; it does not wait for async listeners to settle.
 */
export function dispatchIsolated<K extends keyof Events>(ctx: Context, name: K, ...args: Parameters<Events[K]>): void {
  let pending: Promise<void>
  try {
    pending = (ctx.parallel as any)(name, ...args)
  } catch (error) {
    ctx.logger('events').error('listener of %s failed: %s', String(name), error)
    return
  }
  pending.catch((error: unknown) => {
    const errors = error instanceof AggregateError ? error.errors : [error]
    for (const e of errors) ctx.logger('events').error('listener of %s failed: %s', String(name), (e as Error)?.stack ?? e)
  })
}
