import type { CliIO } from '../../command.ts'
import { redact } from '../../redact.ts'

/** Something drawn on the terminal (chat's prompt) that must step aside while output is written. */
export interface PromptSurface {
  hide(): void
  show(): void
}

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

  constructor(readonly io: CliIO, readonly json: boolean) {}

  /** Assistant text is streamed only to a person: a TTY, and not in JSON mode. */
  get streaming(): boolean {
    return !this.json && !!this.io.stdout.isTTY
  }

  /** One progress line on stderr. */
  progress(line: string): void {
    this.surface?.hide()
    this.closeLine()
    this.io.stderr.write(redact(`${line}\n`))
    this.surface?.show()
  }

  /** A progress line from goalkeeper itself (session, model, hints). */
  note(line: string): void {
    this.progress(`goalkeeper: ${line}`)
  }

  /** Result lines on stdout; ignored in JSON mode, where only JSON goes there. */
  out(text: string): void {
    if (this.json) return
    this.surface?.hide()
    this.closeLine()
    this.io.stdout.write(redact(text.endsWith('\n') ? text : `${text}\n`))
    this.surface?.show()
  }

  /** One JSON object as one stdout line (JSON mode only). */
  record(value: unknown): void {
    if (this.json) this.io.stdout.write(redact(`${JSON.stringify(value)}\n`))
  }

  /** A piece of assistant text as it arrives (TTY only). */
  delta(text: string): void {
    if (!this.streaming || !text) return
    if (!this.midLine) this.surface?.hide()
    this.io.stdout.write(redact(text))
    this.streamed = true
    this.midLine = !text.endsWith('\n')
    // At a line end the prompt can come back below the text until the next piece arrives.
    if (!this.midLine) this.surface?.show()
  }

  /**
   * Marks the streamed answer as cut off (` [cut off]` and a newline), so an answer asked for again starts
   * on its own line instead of being glued to the broken one. Nothing when no text was streamed.
   */
  cutOff(): void {
    if (!this.streaming || !this.streamed) return
    this.surface?.hide()
    this.io.stdout.write(this.midLine ? ' [cut off]\n' : '[cut off]\n')
    this.midLine = false
    this.streamed = false
    this.surface?.show()
  }

  /** Ends streamed text with a newline, so the next line starts clean. */
  endStream(): void {
    this.streamed = false
    if (!this.midLine) return
    this.closeLine()
    this.surface?.show()
  }

  private closeLine(): void {
    if (!this.midLine) return
    this.midLine = false
    this.io.stdout.write('\n')
  }
}
