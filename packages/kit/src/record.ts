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
