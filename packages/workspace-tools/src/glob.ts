/**
 * Globs over `/`-separated relative paths: `*` and `?` stay inside one path segment, `**` spans
 * segments (`**\/` may match none), `[abc]`/`[!abc]` are classes, `{a,b}` alternatives (nestable).
 * Written here because node's `path.matchesGlob` is still experimental on Node 20, and matched by
 * memoised search rather than a RegExp: a model-chosen glob such as `*a*a*a*a*a*a*b` makes a
 * backtracking RegExp run for minutes, blocking the event loop. This is O(tokens × length).
 */

type Token =
  | { kind: 'char'; char: string }
  | { kind: 'one' } // ?
  | { kind: 'star' } // *
  | { kind: 'any' } // ** not followed by /
  | { kind: 'dirs' } // **/: nothing, or anything ending in /
  | { kind: 'class'; test: (char: string) => boolean }

/** Brace expansion multiplies, and matching recurses once per character: a glob is a filter, not a program. */
const MAX_ALTERNATIVES = 256
const MAX_GLOB_CHARS = 1000

/** Expands `{a,b}` (nested too) into plain globs. */
function expandBraces(glob: string): string[] {
  const open = glob.indexOf('{')
  if (open < 0) return [glob]
  let depth = 0
  const commas: number[] = []
  for (let i = open; i < glob.length; i++) {
    if (glob[i] === '{') depth += 1
    else if (glob[i] === '}' && --depth === 0) {
      const bounds = [open, ...commas, i]
      const options = bounds.slice(1).map((end, k) => glob.slice(bounds[k] + 1, end))
      const rest = expandBraces(glob.slice(i + 1))
      const out: string[] = []
      for (const option of options.flatMap(expandBraces)) {
        for (const tail of rest) {
          out.push(glob.slice(0, open) + option + tail)
          if (out.length > MAX_ALTERNATIVES) throw new SyntaxError(`too many alternatives in glob (more than ${MAX_ALTERNATIVES})`)
        }
      }
      return out
    } else if (glob[i] === ',' && depth === 1) commas.push(i)
  }
  throw new SyntaxError(`unbalanced "{" in glob ${JSON.stringify(glob)}`)
}

function tokenize(glob: string): Token[] {
  const tokens: Token[] = []
  for (let i = 0; i < glob.length; i++) {
    const char = glob[i]
    if (char === '*') {
      if (glob[i + 1] !== '*') tokens.push({ kind: 'star' })
      else if (glob[i + 2] === '/') (tokens.push({ kind: 'dirs' })), (i += 2)
      else (tokens.push({ kind: 'any' })), (i += 1)
    } else if (char === '?') tokens.push({ kind: 'one' })
    else if (char === '[' && glob.indexOf(']', i + 2) > i) {
      const end = glob.indexOf(']', i + 2)
      const body = glob.slice(i + 1, end).replace(/^!/, '^').replace(/\\/g, '\\\\')
      // One character against one class: no backtracking is possible.
      const regexp = new RegExp(`^[${body}]$`)
      tokens.push({ kind: 'class', test: (c) => c !== '/' && regexp.test(c) })
      i = end
    } else tokens.push({ kind: 'char', char })
  }
  return tokens
}

/** Whether `tokens` match all of `text`; every (token, position, inside-dirs) state is tried at most once. */
function matches(tokens: readonly Token[], text: string): boolean {
  const n = text.length
  const failed = new Set<number>()
  const match = (ti: number, si: number, inDirs: boolean): boolean => {
    const key = (ti * (n + 1) + si) * 2 + (inDirs ? 1 : 0)
    if (failed.has(key)) return false
    const token = tokens[ti]
    let ok: boolean
    if (!token) ok = si === n
    else if (token.kind === 'star') ok = match(ti + 1, si, false) || (si < n && text[si] !== '/' && match(ti, si + 1, false))
    else if (token.kind === 'any') ok = match(ti + 1, si, false) || (si < n && match(ti, si + 1, false))
    else if (token.kind === 'dirs') {
      ok = (!inDirs && match(ti + 1, si, false)) || (si < n && ((text[si] === '/' && match(ti + 1, si + 1, false)) || match(ti, si + 1, true)))
    } else if (si >= n) ok = false
    else if (token.kind === 'one') ok = text[si] !== '/' && match(ti + 1, si + 1, false)
    else if (token.kind === 'class') ok = token.test(text[si]) && match(ti + 1, si + 1, false)
    else ok = text[si] === token.char && match(ti + 1, si + 1, false)
    if (!ok) failed.add(key)
    return ok
  }
  return match(0, 0, false)
}

/** A glob without `/` matches file names anywhere (like `*.ts`); with `/` it matches the path from the search base. */
export function globMatcher(glob: string): (relative: string) => boolean {
  if (glob.length > MAX_GLOB_CHARS) throw new SyntaxError(`the glob is longer than ${MAX_GLOB_CHARS} characters`)
  const clean = glob.replace(/^\.\//, '')
  const alternatives = expandBraces(clean).map(tokenize)
  const test = (text: string) => alternatives.some((tokens) => matches(tokens, text))
  if (clean.includes('/')) return test
  return (relative) => test(relative.slice(relative.lastIndexOf('/') + 1))
}
