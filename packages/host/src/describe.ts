/** Short human rendering of a value for error messages: `"x"`, `5`, `a list`, `a mapping`. */
export function describeValue(value: unknown): string {
  if (value === null || value === undefined) return String(value)
  if (Array.isArray(value)) return 'a list'
  if (typeof value === 'object') return 'a mapping'
  if (typeof value === 'string') {
    const text = JSON.stringify(value)
    return text.length > 60 ? `${text.slice(0, 57)}..."` : text
  }
  return String(value)
}
