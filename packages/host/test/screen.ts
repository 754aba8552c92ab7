/**
 * The lines a terminal would show for raw output: enough of a terminal for what readline and the CLI
 * write (carriage return, newline, erase line or to its end, cursor to column, cursor left and right). What is drawn
 * and then erased does not appear, which is the point: a test sees the screen, not the bytes.
 */
export function screenLines(raw: string): string[] {
  const lines: string[] = []
  let line: string[] = []
  let column = 0
  const pattern = /\x1b\[([?\d;]*)([A-Za-z~])|\x1b[^[]|\r|\n|[^\x1b\r\n]/gu
  for (const [token, count, command] of raw.matchAll(pattern)) {
    if (token === '\r') column = 0
    else if (token === '\n') {
      lines.push(line.join('').trimEnd())
      line = []
      column = 0
    } else if (token.startsWith('\x1b')) {
      // Other sequences (modes, colors, cursor up/down) do not change which text is on a line.
      const n = count === '' || count === undefined ? undefined : Number(count)
      if (command === 'G') column = Math.max(0, (n ?? 1) - 1)
      else if (command === 'C') column += n ?? 1
      else if (command === 'D') column = Math.max(0, column - (n ?? 1))
      else if (command === 'K' && n === 2) line = []
      else if ((command === 'K' || command === 'J') && (n ?? 0) === 0) line = line.slice(0, column)
      else if (command === 'K' && n === 1) line = line.map((char, index) => (index < column ? ' ' : char))
    } else {
      while (line.length < column) line.push(' ')
      line[column++] = token
    }
  }
  if (line.length) lines.push(line.join('').trimEnd())
  return lines
}
