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
