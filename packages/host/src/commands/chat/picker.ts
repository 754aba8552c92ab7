import { emitKeypressEvents } from 'node:readline'

/** The terminal a picker takes over while it is open: raw keys in, the list drawn out. */
export interface PickerTerminal {
  input: NodeJS.ReadableStream & { isTTY?: boolean; isRaw?: boolean; setRawMode?(raw: boolean): unknown }
  output: NodeJS.WritableStream & { columns?: number; rows?: number }
}

interface Key {
  name?: string
  ctrl?: boolean
}

const HELP = '↑/↓ or j/k move · Enter picks · Esc or q cancels'

/** Moves the cursor `lines` up to the start of a line and erases from there to the end of the screen. */
const eraseUp = (lines: number) => (lines ? `\x1b[${lines}A\r\x1b[J` : '\r\x1b[J')

/**
 * A list to pick one line from with the keyboard: ↑/↓ or k/j move, Enter picks, Esc, q or Ctrl-C cancel
 * (undefined). Drawn below the cursor, redrawn in place, erased when done; `lines` are already fitted
 * to the width. The keys go to the picker only while it is open: other keypress listeners of the input
 * (chat's readline) are set aside and put back, and so are its raw mode and paused state.
 */
export function pickLine(terminal: PickerTerminal, title: string, lines: string[]): Promise<number | undefined> {
  const { input, output } = terminal
  emitKeypressEvents(input)
  const others = input.listeners('keypress') as ((...args: unknown[]) => void)[]
  input.removeAllListeners('keypress')
  const wasRaw = !!input.isRaw
  const wasFlowing = (input as { readableFlowing?: boolean | null }).readableFlowing === true
  input.setRawMode?.(true)
  let index = 0
  let drawn = 0
  const draw = () => {
    const shown = [title, ...lines.map((line, at) => `${at === index ? '>' : ' '} ${line}`), HELP]
    output.write(eraseUp(drawn) + shown.map((line) => `${line}\n`).join(''))
    drawn = shown.length
  }
  return new Promise((resolve) => {
    const done = (picked: number | undefined) => {
      input.removeListener('keypress', onKey)
      for (const listener of others) input.on('keypress', listener)
      input.setRawMode?.(wasRaw)
      if (!wasFlowing) input.pause()
      output.write(eraseUp(drawn))
      resolve(picked)
    }
    const onKey = (_text: string | undefined, key: Key | undefined) => {
      const name = key?.name
      if (name === 'return' || name === 'enter') return done(index)
      if (name === 'escape' || name === 'q' || (key?.ctrl && (name === 'c' || name === 'd'))) return done(undefined)
      const step = name === 'up' || name === 'k' ? -1 : name === 'down' || name === 'j' ? 1 : 0
      if (!step) return
      index = Math.min(lines.length - 1, Math.max(0, index + step))
      draw()
    }
    input.on('keypress', onKey)
    input.resume()
    draw()
  })
}
