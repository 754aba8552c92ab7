/**
 * A non-null object that is not an array, so its string keys can be read: the check before reading the
 * fields of parsed JSON, a tool's return value or a thrown value. Class instances (an `Error` with a
 * `code`) pass; the prototype is not examined.
 */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** Freezes `value` and everything reachable from it; for data that is handed out and must stay as it is. */
export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key])
  }
  return value
}

/**
 * A deep copy of acyclic JSON-like data (plain objects, arrays, primitives), as `structuredClone` makes it
 * but several times faster on the small objects handed out at every question (a goal's state): that clone
 * serialises and deserialises. Anything else inside (a `Date`, a `Map`, a class instance) is copied by
 * `structuredClone`, so the result is the same; a cycle is not supported (the data is a fold of log records).
 */
export function cloneData<T>(value: T): T {
  // Functions and symbols throw there as they would in `structuredClone`.
  if (typeof value === 'function' || typeof value === 'symbol') return structuredClone(value)
  if (typeof value !== 'object' || value === null) return value
  if (Array.isArray(value)) {
    const out = new Array(value.length)
    for (let i = 0; i < value.length; i++) out[i] = cloneData(value[i])
    return out as T
  }
  const proto = Object.getPrototypeOf(value)
  if (proto !== Object.prototype && proto !== null) return structuredClone(value)
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value)) out[key] = cloneData((value as Record<string, unknown>)[key])
  return out as T
}

/** Where Cordis's tracing proxy of a service hands out the service itself (a global symbol of Cordis 4). */
const ORIGINAL = Symbol.for('cordis.original')

/**
 * The service behind Cordis's tracing proxy (`ctx.<service>` as read), for the calls made several times a step.
 * Every method read through the proxy builds a context (`extend`) and two proxies, so that the method's
 * `this.ctx` is the caller's: only a method that registers effects or listeners for its caller (`register`,
 * `provide`) needs that. A value that is no such proxy is returned as it is.
 */
export function untraced<T>(service: T): T {
  if ((typeof service !== 'object' && typeof service !== 'function') || service === null) return service
  return ((service as { [ORIGINAL]?: T })[ORIGINAL] ?? service)
}
