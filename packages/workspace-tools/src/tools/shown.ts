/**
 * Helpers of the tools' titles and locations. A front end may describe a call before it runs, from the
 * arguments as the model sent them, so these never trust the arguments' shape.
 */
export const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined)

/** The one file or directory a call names, as a location (none when the argument is not a path). */
export const located = (value: unknown, line?: unknown) => {
  const file = text(value)
  return file ? [{ path: file, ...(typeof line === 'number' ? { line } : {}) }] : []
}
