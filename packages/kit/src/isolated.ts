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
  const report = (error: unknown) => {
    const errors = error instanceof AggregateError ? error.errors : [error]
    for (const e of errors) ctx.logger('events').error('listener of %s failed: %s', String(name), describeError(e, { stack: true }))
  }
  if (hooks && typeof hooks === 'object' && !hooks['internal/dispatch']?.length) {
    const listeners = hooks[name]
    if (!listeners?.length) return
    // What `parallel` does for a dispatch without a `this` (every listener, in order, each started at once),
    // without its promise per listener and `allSettled`: the composition dispatches dozens of events a step.
    if (Array.isArray(listeners) && listeners.every(isHook)) return callEach(listeners.slice(), args, report)
  }
  // `parallel` is an async method: a listener's synchronous throw is part of its rejection, never thrown here.
  // Called on `events`, as read: Cordis then runs it with the caller's shadow, as `events.parallel(...)` would.
  parallel.call(events, name, ...args).catch(report)
}

/** A Cordis listener record (`_hooks[name]` entries): its callback is what `parallel` calls. */
const isHook = (hook: unknown): hook is { callback: (...args: unknown[]) => unknown } =>
  typeof (hook as { callback?: unknown } | null)?.callback === 'function'

/** Calls every listener with `this` null, as `parallel` does; a throw or rejection is reported, never thrown. */
function callEach(listeners: { callback: (...args: unknown[]) => unknown }[], args: unknown[], report: (error: unknown) => void): void {
  for (const { callback } of listeners) {
    try {
      const result = Reflect.apply(callback, null, args)
      if (result && typeof (result as PromiseLike<unknown>).then === 'function') (result as PromiseLike<unknown>).then(undefined, report)
    } catch (error) {
      // Reported a microtask later, as a rejection of `parallel` would be: never in the middle of the caller's code.
      queueMicrotask(() => report(error))
    }
  }
}
