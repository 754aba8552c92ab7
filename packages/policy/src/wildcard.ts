/**
 * A matcher for tool name patterns: `*` matches any run of characters; every other character is literal (so
 * `.` is only a dot). No patterns match nothing.
 */
export function wildcard(patterns: readonly string[]): (name: string) => boolean {
  if (!patterns.length) return () => false
  const escaped = patterns.map((p) => p.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*'))
  const regex = new RegExp(`^(?:${escaped.join('|')})$`)
  return (name) => regex.test(name)
}
