import { createHash } from 'node:crypto'

export interface SignatureOptions {
  /** Keys dropped at every depth before comparing (volatile bookkeeping such as `task_progress`). */
  ignoreKeys: readonly string[]
  collapseWhitespace: boolean
  normalizePaths: boolean
}

export function digest(text: string): string {
  return createHash('sha256').update(text).digest('base64url')
}

export interface CanonicalArguments {
  text: string
  /** False when the raw text is not JSON; `text` is then the raw text, verbatim. */
  json: boolean
}

/**
 * The canonical text of a call's arguments: parsed JSON with keys sorted at every depth, ignored keys
 * dropped and strings normalised. Text that is not JSON is kept verbatim and marked, so two different
 * malformed payloads never share a signature and never collide with a parsed one.
 */
export function canonicalArguments(raw: string, options: SignatureOptions): CanonicalArguments {
  if (raw.trim() === '') return { text: '{}', json: true }
  let value: unknown
  try {
    value = JSON.parse(raw)
  } catch {
    return { text: raw, json: false }
  }
  return { text: JSON.stringify(normalize(value, options, new Set(options.ignoreKeys))), json: true }
}

function normalize(value: unknown, options: SignatureOptions, ignore: ReadonlySet<string>): unknown {
  if (typeof value === 'string') return normalizeString(value, options)
  if (Array.isArray(value)) return value.map((item) => normalize(item, options, ignore))
  if (value === null || typeof value !== 'object') return value
  const sorted: Record<string, unknown> = {}
  for (const key of Object.keys(value).sort()) {
    if (ignore.has(key)) continue
    sorted[key] = normalize((value as Record<string, unknown>)[key], options, ignore)
  }
  return sorted
}

function normalizeString(text: string, options: SignatureOptions): string {
  let result = options.collapseWhitespace ? text.replace(/\s+/g, ' ').trim() : text
  if (options.normalizePaths) result = normalizePath(result)
  return result
}

/**
 * `./a`, `a`, `a/` and `a//b/./` spell the same path for every tool we know, so they should not
 * look like different calls. Only strings that contain a slash and no whitespace or URL scheme are
 * touched; anything else is not a path worth guessing about.
 */
export function normalizePath(text: string): string {
  if (!text.includes('/') || /\s/.test(text) || text.includes('://')) return text
  let path = text.replace(/\/{2,}/g, '/').replace(/\/\.(?=\/|$)/g, '')
  while (path.startsWith('./')) path = path.slice(2)
  if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1)
  return path === '' ? '.' : path
}

/** `*` matches any run of characters; every other character is literal (so `.` is only a dot). */
export function wildcard(patterns: readonly string[]): (name: string) => boolean {
  if (!patterns.length) return () => false
  const escaped = patterns.map((p) => p.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*'))
  const regex = new RegExp(`^(?:${escaped.join('|')})$`)
  return (name) => regex.test(name)
}
