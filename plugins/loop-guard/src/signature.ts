export interface SignatureOptions {
  /** Keys dropped at every depth before comparing (volatile bookkeeping such as `task_progress`). */
  ignoreKeys: readonly string[]
  collapseWhitespace: boolean
  normalizePaths: boolean
  /**
   * For the near-identical form: every JSON number becomes `#`, and each string goes through this function
   * (see `looseString`) instead of the exact normalisation.
   */
  loose?: (text: string) => string
}

export interface CanonicalArguments {
  text: string
  /**
   * How `text` was made: `json`, the canonical form; `invalid`, the raw text of arguments that are not
   * JSON; `deep`, the raw text of JSON nested deeper than MAX_DEPTH, which is not worth walking.
   */
  form: 'json' | 'invalid' | 'deep'
}

/** The tool pipeline refuses deeper arguments; walking them recursively could overflow the stack. */
const MAX_DEPTH = 64

class TooDeep {}

/**
 * The canonical text of a call's arguments: parsed JSON with keys sorted at every depth, ignored keys
 * dropped and strings normalised. Text that is not JSON is kept verbatim and marked, so two different
 * malformed payloads never share a signature and never collide with a parsed one.
 */
export function canonicalArguments(raw: string, options: SignatureOptions): CanonicalArguments {
  if (raw.trim() === '') return { text: '{}', form: 'json' }
  let value: unknown
  try {
    value = JSON.parse(raw)
  } catch {
    return { text: raw, form: 'invalid' }
  }
  try {
    return { text: serialize(value, options, new Set(options.ignoreKeys), 0), form: 'json' }
  } catch (error) {
    if (error instanceof TooDeep) return { text: raw, form: 'deep' }
    throw error
  }
}

/**
 * Written by hand rather than through JSON.stringify, which would drop a `__proto__` key (assigning it
 * sets the prototype) and print out-of-range numbers as `null`: either would make different calls equal.
 */
function serialize(value: unknown, options: SignatureOptions, ignore: ReadonlySet<string>, depth: number): string {
  if (depth > MAX_DEPTH) throw new TooDeep()
  if (typeof value === 'string') return JSON.stringify(normalizeString(value, options))
  if (typeof value === 'number') return options.loose ? '#' : Number.isFinite(value) ? JSON.stringify(value) : String(value)
  if (Array.isArray(value)) return `[${value.map((item) => serialize(item, options, ignore, depth + 1)).join(',')}]`
  if (value === null || typeof value !== 'object') return JSON.stringify(value)
  const entries = Object.keys(value).sort().filter((key) => !ignore.has(key))
    .map((key) => `${JSON.stringify(key)}:${serialize((value as Record<string, unknown>)[key], options, ignore, depth + 1)}`)
  return `{${entries.join(',')}}`
}

/** `# ...` to the end of the line, where `#` starts a word, as a shell reads it. */
const SHELL_COMMENT = /(^|\s)#[^\n]*/g
/**
 * A number standing alone (`sleep 5`, `--timeout=30`, `-n 20`), not digits inside a name (`test1.txt`,
 * `job-12`, `v2`): those tell different things apart, while a lone number is a duration, a count or an offset.
 */
const LONE_NUMBER = /(?<![\w.\-/])\d+(?:\.\d+)?(?![\w\-/]|\.\w)/g

/**
 * A string in the near-identical form: shell comments dropped, volatile parts (timestamps, durations, ...)
 * masked by `mask`, lone numbers made `#`, single quotes made double, whitespace collapsed.
 */
export function looseString(text: string, mask: (text: string) => string): string {
  return mask(text.replace(SHELL_COMMENT, '$1')).replace(LONE_NUMBER, '#').replace(/'/g, '"').replace(/\s+/g, ' ').trim()
}

function normalizeString(text: string, options: SignatureOptions): string {
  let result = options.loose ? options.loose(text) : text
  result = options.collapseWhitespace ? result.replace(/\s+/g, ' ').trim() : result
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
