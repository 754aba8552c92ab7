import type { Context, Events } from 'cordis'
import { describeError } from './errors.ts'

// Each `ctx.events` lookup goes through Cordis's context proxy, and each method read on it builds two more
// proxies (the caller's shadow); the core events service never changes, so both are taken once per context.
const eventsOf = new WeakMap<Context, { events: any; parallel: (...args: unknown[]) => Promise<unknown> }>()

/**
 * Dispatches an event so that every listener runs and a throw or rejection is logged and contained
 * (DESIGN.md section 2: events called "isolated"). Cordis's `emit` stops at the first throwing listener
 * and leaks async rejections; `parallel` starts every listener synchronously and gathers failures.
 * Listeners start before this returns; it does not wait for async listeners to settle.
 */
export function dispatchIsolated<K extends keyof Events>(ctx: Context, name: K, ...args: Parameters<Events[K]>): void {
  // Going through `ctx.parallel` costs tens of microseconds even with no listener (Cordis 4.0.0-rc.10
  // builds an Error on every mixin lookup), and `session/event` fires on every append: call the events
  // service directly, and not at all when nobody listens. `_hooks` is internal, hence the guard.
  let known = eventsOf.get(ctx)
  if (!known) {
    const events = ctx.events as any
    eventsOf.set(ctx, (known = { events, parallel: events.parallel }))
  }
  const { events, parallel } = known
  const hooks = events._hooks
  if (hooks && typeof hooks === 'object' && !hooks[name]?.length && !hooks['internal/dispatch']?.length) return
  // `parallel` is an async method: a listener's synchronous throw is part of its rejection, never thrown here.
  // Called on `events`, as read: Cordis then runs it with the caller's shadow, as `events.parallel(...)` would.
  parallel.call(events, name, ...args).catch((error: unknown) => {
    const errors = error instanceof AggregateError ? error.errors : [error]
    for (const e of errors) ctx.logger('events').error('listener of %s failed: %s', String(name), describeError(e, { stack: true }))
  })
}
