import { clip } from '@goalkeeper/kit'

/** Whitespace collapsed to single spaces, cut to `max` characters with an ellipsis. */
export function oneLine(text: string, max: number): string {
  return clip(text.replace(/\s+/g, ' ').trim(), max)
}

/** At most `lines` lines and `chars` characters, with a note of what was left out. */
export function excerpt(text: string, lines: number, chars: number): string {
  const all = text.split('\n')
  const shown = clip(all.slice(0, lines).join('\n'), chars, '')
  const hidden = text.length - shown.length
  return hidden > 0 ? `${shown.trimEnd()}\n[… ${hidden} more characters]` : shown
}

/** Tool-call arguments in one short line: compact JSON when they parse, else the raw text. */
export function shortArguments(raw: string, max = 100): string {
  let text = raw.trim() || '{}'
  try {
    text = JSON.stringify(JSON.parse(text))
  } catch {
    // Malformed arguments are shown as the model wrote them.
  }
  return oneLine(text, max)
}

const pad = (value: number) => String(value).padStart(2, '0')

/** `2026-11-29 21:14` in local time: minutes are what a person scanning a list needs. */
export function formatTime(ms: number): string {
  const date = new Date(ms)
  if (Number.isNaN(date.getTime())) return '-'
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}`
}

/** Left-aligned columns separated by two spaces; the last column is not padded. */
export function table(rows: string[][]): string[] {
  // reduce, not Math.max(...rows): spreading one argument per row overflows the stack on long tables.
  const widths = rows[0]?.map((_, column) => rows.reduce((width, row) => Math.max(width, Array.from(row[column] ?? '').length), 0)) ?? []
  return rows.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell + ' '.repeat(widths[column] - Array.from(cell).length))).join('  ').trimEnd())
}

/**
 * The width human output is fitted to: the terminal's, else `COLUMNS`, else 80 (piped output goes to
 * files, pagers and CI logs, which 80 columns suit).
 */
export function outputWidth(stream: { isTTY?: boolean; columns?: number } = process.stdout): number {
  if (stream.isTTY && stream.columns && stream.columns > 0) return stream.columns
  const columns = Number(process.env.COLUMNS)
  return Number.isInteger(columns) && columns > 0 ? columns : 80
}

const length = (text: string) => Array.from(text).length

/** The end of `text` in at most `max` characters, an ellipsis in front: a path's last parts say the most. */
export function clipStart(text: string, max: number): string {
  const chars = Array.from(text)
  if (chars.length <= max) return text
  return max < 1 ? '' : '…' + chars.slice(chars.length - max + 1).join('')
}

export interface Shrinkable {
  column: number
  /** Narrowest the column gets before the next one is shrunk. */
  min: number
  /** Which end survives: `end` for paths. */
  keep?: 'start' | 'end'
}

/**
 * `table`, fitted to `width` by shortening the `shrinkable` columns in the order given (each down to its
 * `min`, with an ellipsis); when they are all at their minimum the lines may still be longer.
 */
export function fitTable(rows: string[][], width: number, shrinkable: Shrinkable[]): string[] {
  const widths = rows[0]?.map((_, column) => rows.reduce((most, row) => Math.max(most, length(row[column] ?? '')), 0)) ?? []
  let excess = widths.reduce((sum, each) => sum + each, 0) + 2 * Math.max(0, widths.length - 1) - width
  for (const { column, min } of shrinkable) {
    if (excess <= 0) break
    const cut = Math.min(excess, Math.max(0, widths[column] - min))
    widths[column] -= cut
    excess -= cut
  }
  const fitted = rows.map((row) =>
    row.map((cell, column) => {
      const rule = shrinkable.find((each) => each.column === column)
      if (!rule || length(cell) <= widths[column]) return cell
      return rule.keep === 'end' ? clipStart(cell, widths[column]) : Array.from(cell).slice(0, widths[column] - 1).join('') + '…'
    }),
  )
  return table(fitted)
}

/**
 * One line broken at spaces into lines of at most `width` characters, continued under the text after
 * its leading spaces or list label (`  64   bad command…`); a word longer than the width (a path, a URL)
 * stays whole.
 */
export function wrapLine(line: string, width: number): string[] {
  if (length(line) <= width) return [line]
  const label = /^(\s*(?:\S(?:.*?\S)? {2,})?)(?=\S)/.exec(line)?.[1] ?? ''
  const hang = ' '.repeat(length(label) < width / 2 ? length(label) : 0)
  const words = line.slice(label.length).split(' ')
  const lines: string[] = []
  let current = label
  for (const word of words) {
    const start = current === label || current === hang
    if (!start && length(current) + 1 + length(word) > width) {
      lines.push(current)
      current = hang + word
    } else current = start ? current + word : `${current} ${word}`
  }
  lines.push(current)
  return lines
}

/** Every line of `text` wrapped to `width` (help texts, notes). */
export function wrapText(text: string, width: number): string {
  return text
    .split('\n')
    .flatMap((line) => wrapLine(line, width))
    .join('\n')
}

type Stream = { isTTY?: boolean; columns?: number }

/**
 * The width event lines (progress of run, goal and chat, `show`'s transcript) are fitted to: the terminal's,
 * else `COLUMNS` when it is set; undefined (piped without COLUMNS): lines stay whole, one per event, for grep
 * and logs.
 */
export function eventWidth(stream: Stream = process.stdout): number | undefined {
  if (stream.isTTY && stream.columns && stream.columns > 0) return stream.columns
  const columns = Number(process.env.COLUMNS)
  return Number.isInteger(columns) && columns > 0 ? columns : undefined
}

/** The start of `text` in `width` characters, the last an ellipsis. */
const cutEnd = (text: string, width: number) =>
  Array.from(text).slice(0, Math.max(0, width - 1)).join('') + '…'

/** A control sequence (colour, cursor): whole or not at all, and no column of its own. */
const ESCAPE = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]/g

/** The characters of `line` the terminal shows: escape sequences do not count. */
export function shownLength(line: string): number {
  return length(line.replace(ESCAPE, ''))
}

/**
 * `line` in at most `width` shown characters, ending with an ellipsis when cut. Escape sequences are never
 * cut in half, and those after the cut are kept, so a colour's reset still ends the line's colour.
 */
export function fitLine(line: string, width: number): string {
  if (!line.includes('\x1b')) return length(line) <= width ? line : cutEnd(line, width)
  if (shownLength(line) <= width) return line
  let out = ''
  let shown = 0
  let cut = false
  let last = 0
  const take = (text: string) => {
    for (const char of text) {
      if (shown < width - 1) {
        out += char
        shown++
      } else if (!cut) {
        out += '…'
        cut = true
      }
    }
  }
  for (const match of line.matchAll(ESCAPE)) {
    take(line.slice(last, match.index))
    out += match[0]
    last = match.index + match[0].length
  }
  take(line.slice(last))
  return out
}

/** Every line of `text` fitted to `width`; undefined width leaves the text whole. */
export function fitLines(text: string, width: number | undefined): string {
  return width === undefined ? text : text.split('\n').map((line) => fitLine(line, width)).join('\n')
}

/**
 * Every line of `text` broken at spaces to `width` (continued under its indentation or label, as `wrapLine`,
 * or under `hang` when given), and a word still longer than the width cut with an ellipsis: prose (messages,
 * reasoning, notes) loses nothing but such a word; undefined width leaves the text whole.
 */
export function wrapLines(text: string, width: number | undefined, hang = ''): string {
  if (width === undefined) return text
  return text
    .split('\n')
    .flatMap((line) => {
      const [first, ...rest] = wrapLine(line, width)
      if (!hang || !rest.length) return [first, ...rest]
      return [first, ...wrapLine(hang + rest.map((part) => part.trim()).join(' '), width)]
    })
    .map((line) => fitLine(line, width))
    .join('\n')
}

/**
 * `before + path + after` in `width` columns (with `lead`, written in front of it elsewhere, counted): the
 * path shortened at its start (`…/src/index.ts`), to no fewer than 16 characters; whole without a width.
 */
export function keepEnd(before: string, path: string, after: string, width?: number, lead = ''): string {
  if (width === undefined) return before + path + after
  const room = width - length(lead) - length(before) - length(after)
  return before + clipStart(path, Math.max(16, room)) + after
}

/**
 * `before + middle + after` in `width` columns: the middle (a command, an objective) cut at its end, to no
 * fewer than 16 characters, so that what `after` says (how it ended) stays; whole when width is undefined.
 */
export function keepStart(before: string, middle: string, after: string, width: number | undefined): string {
  if (width === undefined) return before + middle + after
  const room = Math.max(16, width - length(before) - length(after))
  return before + (length(middle) <= room ? middle : cutEnd(middle, room)) + after
}
