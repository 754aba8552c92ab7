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
