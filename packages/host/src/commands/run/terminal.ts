import type { CliIO } from '../../command.ts'
import { redact } from '../../redact.ts'
import { eventWidth, fitLines, wrapLines } from '../render/text.ts'

/** Something drawn on the terminal (chat's prompt) that must step aside while output is written. */
export interface PromptSurface {
  hide(): void
  show(): void
  /** Shows the live status in the prompt line (undefined: the plain prompt again). */
  status?(text: string | undefined): void
}

/** How a line is fitted to the width: cut with an ellipsis, broken at spaces, or kept whole. */
export type Fit = 'cut' | 'wrap' | 'whole'

function fitted(text: string, width: number | undefined, mode: Fit): string {
  if (mode === 'whole') return text
  return mode === 'wrap' ? wrapLines(text, width, '  ') : fitLines(text, width)
}

/** Erases the terminal line the cursor is on and returns to its start. */
const ERASE_LINE = '\r\x1b[2K'

/**
 * Where agent commands write. stdout carries results only (the answer, the goal summary, or with `--json`
 * one JSON object per line); progress goes to stderr. Everything is masked for secrets.
 */
export class Terminal {
  surface: PromptSurface | undefined
  /** Streamed assistant text has been written to stdout without its closing newline. */
  private midLine = false
  /** Assistant text has been streamed since the last end of an answer (endStream or cutOff). */
  private streamed = false
  /** The live status line drawn on stderr (without a newline), to erase before anything else is written. */
  private statusShown = false
  /** Streamed reasoning has been written to stderr without its closing newline. */
  private reasoningMidLine = false
  /** The status to draw again after other output, until it is cleared. */
  private statusText: string | undefined

  constructor(readonly io: CliIO, readonly json: boolean) {}

  /** Live status and streamed reasoning go to a person only: stderr is a TTY, and not in JSON mode. */
  get live(): boolean {
    return !this.json && !!this.io.stderr.isTTY
  }

  /** Colours only on a TTY, and never when NO_COLOR is set (https://no-color.org). */
  get colour(): boolean {
    return !!this.io.stderr.isTTY && !process.env.NO_COLOR
  }

  /**
   * The one live status line (elapsed time, tokens, round, spend), replaced in place, never scrolled; undefined
   * erases it. In chat it goes into the prompt line; elsewhere it is drawn on stderr, clipped to the width,
   * and only while no streamed text holds a line open.
   */
  status(text: string | undefined): void {
    if (!this.live) return
    if (this.surface?.status) return this.surface.status(text)
    this.statusText = text
    this.drawStatus()
  }

  private drawStatus(): void {
    const text = this.statusText
    this.eraseStatus()
    if (!this.live || text === undefined || this.midLine || this.reasoningMidLine) return
    // One column short of the width: a terminal may wrap a line that fills its last column.
    const shown = fitLines(redact(text), (this.width ?? 80) - 1)
    this.io.stderr.write(shown)
    this.statusShown = true
  }

  /** A piece of reasoning as it arrives, on stderr, each line marked `reasoning:` (live output only). */
  reasoning(text: string): void {
    if (!this.live || !text) return
    this.eraseStatus()
    this.closeLine()
    this.surface?.hide()
    const lines = text.split('\n')
    const shown = lines.map((line, index) => (index === 0 && this.reasoningMidLine) || (index === lines.length - 1 && line === '') ? line : `  reasoning: ${line}`).join('\n')
    this.io.stderr.write(redact(shown))
    this.reasoningMidLine = !text.endsWith('\n')
    if (!this.reasoningMidLine) {
      this.surface?.show()
      this.drawStatus()
    }
  }

  private eraseStatus(): void {
    if (!this.statusShown) return
    this.statusShown = false
    this.io.stderr.write(ERASE_LINE)
  }

  private closeReasoning(): void {
    if (!this.reasoningMidLine) return
    this.reasoningMidLine = false
    this.io.stderr.write('\n')
  }

  /** Assistant text is streamed only to a person: a TTY, and not in JSON mode. */
  get streaming(): boolean {
    return !this.json && !!this.io.stdout.isTTY
  }

  /**
   * The width progress lines are fitted to: the terminal's, else `COLUMNS`; undefined when piped without
   * COLUMNS (lines stay whole). Asked each time, so a resized terminal is followed.
   */
  get width(): number | undefined {
    return eventWidth(this.io.stderr)
  }

  /**
   * One progress line on stderr (an event), each of its lines cut to the width with an ellipsis. `mode`:
   * `wrap` breaks prose at spaces instead of cutting it (continued two columns in); `whole` keeps a line a
   * person copies or approves (a command). Masked before it is cut, so that a secret is never half shown.
   */
  progress(line: string, mode: Fit = 'cut'): void {
    this.eraseStatus()
    this.closeReasoning()
    this.surface?.hide()
    this.closeLine()
    this.io.stderr.write(`${fitted(redact(line), this.width, mode)}\n`)
    this.surface?.show()
    this.drawStatus()
  }

  /** A line from goalkeeper itself (session, model, hints): its own sentences, wrapped rather than cut. */
  note(line: string, mode: Fit = 'wrap'): void {
    this.progress(`goalkeeper: ${line}`, mode)
  }

  /**
   * Result lines on stdout; ignored in JSON mode, where only JSON goes there. The answer and other payloads
   * are written whole; goalkeeper's own summaries are wrapped (`mode`) to stdout's width.
   */
  out(text: string, mode: Fit = 'whole'): void {
    if (this.json) return
    this.eraseStatus()
    this.closeReasoning()
    this.surface?.hide()
    this.closeLine()
    const shown = fitted(redact(text.replace(/\n$/, '')), eventWidth(this.io.stdout), mode)
    this.io.stdout.write(`${shown}\n`)
    this.surface?.show()
    this.drawStatus()
  }

  /** One JSON object as one stdout line (JSON mode only). */
  record(value: unknown): void {
    if (this.json) this.io.stdout.write(redact(`${JSON.stringify(value)}\n`))
  }

  /** A piece of assistant text as it arrives (TTY only). */
  delta(text: string): void {
    if (!this.streaming || !text) return
    this.eraseStatus()
    this.closeReasoning()
    if (!this.midLine) this.surface?.hide()
    this.io.stdout.write(redact(text))
    this.streamed = true
    this.midLine = !text.endsWith('\n')
    // At a line end the prompt (or the status) can come back below the text until the next piece arrives.
    if (!this.midLine) {
      this.surface?.show()
      this.drawStatus()
    }
  }

  /**
   * Marks the streamed answer as cut off (` [cut off]` and a newline), so an answer asked for again starts
   * on its own line instead of being glued to the broken one. Nothing when no text was streamed.
   */
  cutOff(): void {
    if (!this.streaming || !this.streamed) return
    this.eraseStatus()
    this.surface?.hide()
    this.io.stdout.write(this.midLine ? ' [cut off]\n' : '[cut off]\n')
    this.midLine = false
    this.streamed = false
    this.surface?.show()
  }

  /** Ends streamed text with a newline, so the next line starts clean. */
  endStream(): void {
    this.closeReasoning()
    this.streamed = false
    if (!this.midLine) return
    this.closeLine()
    this.surface?.show()
    this.drawStatus()
  }

  private closeLine(): void {
    if (!this.midLine) return
    this.midLine = false
    this.io.stdout.write('\n')
  }
}
