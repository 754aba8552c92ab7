/**
 * A non-null object that is not an array, so its string keys can be read: the check before reading the
 * fields of parsed JSON, a tool's return value or a thrown value. Class instances (an `Error` with a
 * `code`) pass; the prototype is not examined.
 */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
