import { parse, type ParseEntry } from 'shell-quote'

/** Operators that end a simple command (`(` and `)` also open and close subshells and `$(...)`). */
const SEPARATORS = new Set([';', '&&', '||', '|', '&', '|&', ';;', '(', ')', '<(', '>('])
/** Redirections: the word after one is a file, not part of the command. */
const REDIRECTS = new Set(['<', '>', '>>', '>&', '<&', '&>', '&>>', '<<<', '<>', '>|'])
/** Words that only open or continue a compound command: what follows is the command. */
const KEYWORDS = new Set(['if', 'then', 'else', 'elif', 'fi', 'do', 'done', 'while', 'until', '!', '{', '}', 'time', 'esac'])
/** Commands that run the rest of their words as a command, with the options each takes a value for. */
const WRAPPERS: Record<string, { valued: Set<string>; firstArgument?: boolean }> = {
  env: { valued: new Set(['-u', '--unset', '-C', '--chdir', '-S', '--split-string']) },
  command: { valued: new Set() },
  builtin: { valued: new Set() },
  exec: { valued: new Set(['-a']) },
  nice: { valued: new Set(['-n', '--adjustment']) },
  nohup: { valued: new Set() },
  // `timeout DURATION cmd`: the duration is the first word that is not an option.
  timeout: { valued: new Set(['-s', '--signal', '-k', '--kill-after']), firstArgument: true },
  sudo: { valued: new Set(['-u', '--user', '-g', '--group', '-C', '-D', '-h', '-p', '-r', '-t', '-U']) },
  xargs: { valued: new Set(['-a', '-d', '-E', '-I', '-L', '-n', '-P', '-s']) },
  stdbuf: { valued: new Set(['-i', '-o', '-e']) },
}
/** Shells whose `-c` argument is a command line of its own. */
const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh'])
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/

/** How deep `eval`, `sh -c`, backquotes and `$(...)` are followed; what nests deeper is `TOO_DEEP`. */
const MAX_DEPTH = 8
/** Stands for a command nested too deep to be read: deny and ask rules treat it as matching. */
export const TOO_DEEP = Symbol('too deep')

/**
 * Every simple command a shell command line runs, as its words joined by single spaces with quotes
 * removed: the parts of `;`, `&&`, `||`, `|`, `&` and newlines, the bodies of subshells, `$(...)`,
 * backquotes, `if/then/fi`, `for/while` loops and `{ ...; }`, the command behind `env`, `eval`, `X=1`,
 * `command`, `exec`, `nice`, `timeout`, `nohup`, `sudo`, `xargs` and `stdbuf`, and the line given to
 * `sh -c` (bash, zsh, dash, ksh). Parsed with shell-quote; variables stay as written (`$X`), since their
 * values are known only when the command runs.
 */
export function commandsIn(line: string, depth = 0): (string | typeof TOO_DEEP)[] {
  if (depth > MAX_DEPTH) return [TOO_DEEP]
  const commands: (string | typeof TOO_DEEP)[] = []
  const { text, nested } = splitLines(line)
  for (const inner of nested) commands.push(...commandsIn(inner, depth + 1))
  let entries: ParseEntry[]
  try {
    entries = parse(text, (name) => `$${name}`)
  } catch {
    return [...commands, line]
  }
  let words: string[] = []
  const end = () => {
    if (words.length) commands.push(...simple(words, depth))
    words = []
  }
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!
    if (typeof entry === 'string') words.push(entry)
    else if ('comment' in entry) break
    else if ('op' in entry && entry.op === 'glob') words.push((entry as { pattern: string }).pattern)
    else if ('op' in entry && REDIRECTS.has(entry.op)) {
      // `2>&1`: the descriptor before it was read as a word.
      if (/^\d+$/.test(words.at(-1) ?? '')) words.pop()
      if (entry.op === '<' && (entries[i + 1] as { op?: string } | undefined)?.op === '<') i++
      i++
    } else if ('op' in entry && SEPARATORS.has(entry.op)) {
      if (entry.op === '(' && words.at(-1) === '$') words.pop()
      end()
    } else end()
  }
  end()
  return commands
}

/** The simple command behind keywords, assignments and wrappers, and what `eval` and `sh -c` run. */
function simple(input: string[], depth: number): (string | typeof TOO_DEEP)[] {
  const words = [...input]
  const found: (string | typeof TOO_DEEP)[] = []
  for (;;) {
    const first = words[0]
    if (first === undefined) return found
    if (KEYWORDS.has(first) || ASSIGNMENT.test(first)) {
      words.shift()
      continue
    }
    // `for x in a b` and `case x in` hold no command; the body follows `do` or the pattern's `)`.
    if (first === 'for' || first === 'case' || first === 'select') return found
    if (first === 'eval') return [...found, ...commandsIn(words.slice(1).join(' '), depth + 1)]
    if (SHELLS.has(first.split('/').pop()!)) {
      const flag = words.findIndex((word, index) => index > 0 && /^-[a-z]*c[a-z]*$/.test(word))
      if (flag > 0 && words[flag + 1] !== undefined) found.push(...commandsIn(words[flag + 1]!, depth + 1))
      return [...found, words.join(' ')]
    }
    const wrapper = WRAPPERS[first.split('/').pop()!]
    if (!wrapper) return [...found, words.join(' ')]
    // The wrapper itself is a command too (`deny: sudo *`).
    found.push(words.join(' '))
    words.shift()
    let argumentSkipped = !wrapper.firstArgument
    while (words.length) {
      const word = words[0]!
      if (word === '--') {
        words.shift()
        break
      }
      if (word.startsWith('-') && word.length > 1) {
        words.shift()
        if (wrapper.valued.has(word)) words.shift()
        continue
      }
      if (first === 'env' && ASSIGNMENT.test(word)) {
        words.shift()
        continue
      }
      if (!argumentSkipped) {
        words.shift()
        argumentSkipped = true
        continue
      }
      break
    }
  }
}

/** The index of the `)` closing a `$(` whose contents start at `from` (nesting counted), or the end. */
function closingParen(line: string, from: number): number {
  let open = 1
  for (let i = from; i < line.length; i++) {
    if (line[i] === '(') open++
    else if (line[i] === ')' && --open === 0) return i
  }
  return line.length
}

/**
 * The line with its unquoted newlines made `;` (shell-quote reads a newline as a space), and its backquoted
 * parts and the `$(...)` inside double quotes (which shell-quote reads as text) taken out, to be read as
 * commands of their own.
 */
function splitLines(line: string): { text: string; nested: string[] } {
  let text = ''
  const nested: string[] = []
  let quote: '"' | "'" | undefined
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!
    if (c === '\\' && quote !== "'") {
      text += c + (line[i + 1] ?? '')
      i++
      continue
    }
    if (quote) {
      if (c === quote) quote = undefined
      else if (c === '$' && line[i + 1] === '(' && quote === '"') {
        const close = closingParen(line, i + 2)
        nested.push(line.slice(i + 2, close))
        text += ' '
        i = close
        continue
      } else if (c === '`' && quote === '"') {
        const close = line.indexOf('`', i + 1)
        if (close !== -1) {
          nested.push(line.slice(i + 1, close))
          text += ' '
          i = close
          continue
        }
      }
      text += c
      continue
    }
    if (c === '"' || c === "'") quote = c
    if (c === '`') {
      const close = line.indexOf('`', i + 1)
      nested.push(line.slice(i + 1, close === -1 ? line.length : close))
      text += ' '
      i = close === -1 ? line.length : close
      continue
    }
    text += c === '\n' || c === '\r' ? ';' : c
  }
  return { text, nested }
}
