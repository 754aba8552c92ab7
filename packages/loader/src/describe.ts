/** Short human rendering of a value for error messages: `"x"`, `5`, `a list`, `a mapping`. */
export function describeValue(value: unknown): string {
  if (value === null || value === undefined) return String(value)
  if (Array.isArray(value)) return 'a list'
  if (typeof value === 'object') return 'a mapping'
  // A long string is described, not shown: cut short, a secret would no longer match the log redaction.
  if (typeof value === 'string') return value.length > 40 ? `a string of ${value.length} characters` : JSON.stringify(value)
  return String(value)
}
