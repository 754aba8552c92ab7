import { Writable } from 'node:stream'

/**
 * The terminal as chat's readline sees it. While streamed assistant text holds the cursor in the middle
 * of a line, readline's echo of what the person types would land inside that text; `muted` drops
 * readline's writes then. The typed characters still reach readline's line buffer, and the prompt is
 * drawn again, with them, once the streamed line is finished.
 */
export class PromptOutput extends Writable {
  muted = false

  constructor(private target: NodeJS.WritableStream & { columns?: number; rows?: number; isTTY?: boolean }) {
    super()
    // readline wraps long lines at the terminal's width and redraws on resize.
    target.on('resize', () => this.emit('resize'))
  }

  get columns(): number | undefined {
    return this.target.columns
  }

  get rows(): number | undefined {
    return this.target.rows
  }

  get isTTY(): boolean {
    return !!this.target.isTTY
  }

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    if (!this.muted) this.target.write(chunk)
    // Done at once: the next write then goes straight through, in order with the direct writes of the
    // Terminal to the same stream.
    done()
  }
}
