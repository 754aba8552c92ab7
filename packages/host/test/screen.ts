/**
 * The lines a terminal would show for raw output: enough of a terminal for what readline and the CLI
 * write (carriage return, newline, erase line or to its end, erase to the end of the screen, cursor to
 * column, cursor left, right and up). What is drawn and then erased does not appear, which is the point:
 * a test sees the screen, not the bytes. The screen has no height: nothing scrolls off.
 */
export function screenLines(raw: string): string[] {
  const rows: string[][] = [[]]
  let row = 0
  let column = 0
  const pattern = /\x1b\[([?\d;]*)([A-Za-z~])|\x1b[^[]|\r|\n|[^\x1b\r\n]/gu
  for (const [token, count, command] of raw.matchAll(pattern)) {
    const line = rows[row]
    if (token === '\r') column = 0
    else if (token === '\n') {
      row++
      column = 0
      if (rows.length === row) rows.push([])
    } else if (token.startsWith('\x1b')) {
      // Other sequences (modes, colors) do not change which text is on a line.
      const n = count === '' || count === undefined ? undefined : Number(count)
      if (command === 'G') column = Math.max(0, (n ?? 1) - 1)
      else if (command === 'C') column += n ?? 1
      else if (command === 'D') column = Math.max(0, column - (n ?? 1))
      else if (command === 'A') row = Math.max(0, row - (n ?? 1))
      else if (command === 'K' && n === 2) rows[row] = []
      else if (command === 'K' && (n ?? 0) === 0) rows[row] = line.slice(0, column)
      else if (command === 'K' && n === 1) rows[row] = line.map((char, index) => (index < column ? ' ' : char))
      else if (command === 'J' && (n ?? 0) === 0) {
        rows[row] = line.slice(0, column)
        rows.length = row + 1
      }
    } else {
      while (line.length < column) line.push(' ')
      line[column++] = token
    }
  }
  // The line the cursor ends on is shown only when something is on it.
  if (!rows.at(-1)!.length) rows.pop()
  return rows.map((line) => line.join('').trimEnd())
}
