const SPECIAL = /[\\^$.*+?()[\]{}|/]/

/**
 * Converts a glob to a RegExp over `/`-separated relative paths: `*` and `?` stay inside one path
 * segment, `**` spans segments (`**\/` may match none), `[abc]`/`[!abc]` are classes, `{a,b}` alternatives.
 * Written here because node's `path.matchesGlob` is still experimental on Node 20.
 */
export function globToRegExp(glob: string): RegExp {
  let source = ''
  let braces = 0
  for (let i = 0; i < glob.length; i++) {
    const char = glob[i]
    if (char === '*') {
      if (glob[i + 1] !== '*') source += '[^/]*'
      else if (glob[i + 2] === '/') (source += '(?:.*/)?'), (i += 2)
      else (source += '.*'), (i += 1)
    } else if (char === '?') source += '[^/]'
    else if (char === '{') (braces += 1), (source += '(?:')
    else if (char === '}' && braces) (braces -= 1), (source += ')')
    else if (char === ',' && braces) source += '|'
    else if (char === '[' && glob.indexOf(']', i + 2) > i) {
      const end = glob.indexOf(']', i + 2)
      const body = glob.slice(i + 1, end).replace(/^!/, '^').replace(/\\/g, '\\\\')
      source += `[${body}]`
      i = end
    } else source += SPECIAL.test(char) ? `\\${char}` : char
  }
  if (braces) throw new SyntaxError(`unbalanced "{" in glob ${JSON.stringify(glob)}`)
  return new RegExp(`^${source}$`)
}

/** A glob without `/` matches file names anywhere (like `*.ts`); with `/` it matches the path from the search base. */
export function globMatcher(glob: string): (relative: string) => boolean {
  const clean = glob.replace(/^\.\//, '')
  const regexp = globToRegExp(clean)
  if (clean.includes('/')) return (relative) => regexp.test(relative)
  return (relative) => regexp.test(relative.slice(relative.lastIndexOf('/') + 1))
}
