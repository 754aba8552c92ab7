/** How a line longer than the cap ended up: its first bytes, its last bytes, and how long it was. */
export interface CutLine {
  head: Buffer
  tail: Buffer
  bytes: number
}

/**
 * Splits a byte stream into lines in linear time: each chunk is scanned once for newlines, and the partial
 * line is held as a list of pieces, joined only when its newline arrives. A line longer than `maxBytes` is
 * not held: its first `maxBytes` and last `tailBytes` bytes are kept and `onCut` gets them at its end (with
 * `early`, as soon as the line passes `maxBytes`, since a log line may never end), so a process writing
 * without newlines costs a bounded amount of memory.
 */
export class LineSplitter {
  private pieces: Buffer[] = []
  private held = 0
  private total = 0
  private tail: Buffer = Buffer.alloc(0)

  constructor(
    private readonly maxBytes: number,
    private readonly onLine: (line: Buffer) => void,
    private readonly onCut: (cut: CutLine) => void,
    private readonly tailBytes = 0,
    private readonly early = false,
  ) {}

  push(chunk: Buffer): void {
    let start = 0
    while (start < chunk.length) {
      const newline = chunk.indexOf(10, start)
      const end = newline === -1 ? chunk.length : newline
      this.add(chunk.subarray(start, end))
      if (newline === -1) return
      this.end()
      start = newline + 1
    }
  }

  /** Drops the partial line (the stream ended or was reset). */
  clear(): void {
    this.pieces = []
    this.held = 0
    this.total = 0
    this.tail = Buffer.alloc(0)
  }

  private add(piece: Buffer) {
    if (!piece.length) return
    const wasOver = this.total > this.maxBytes
    this.total += piece.length
    const room = this.maxBytes - this.held
    if (room > 0) {
      // Copied: a subarray would keep the whole chunk alive.
      const kept = Buffer.from(piece.subarray(0, room))
      this.pieces.push(kept)
      this.held += kept.length
    }
    if (this.total > this.maxBytes && this.tailBytes > 0) {
      const rest = piece.length > room ? piece.subarray(Math.max(room, 0)) : piece
      this.tail = rest.length >= this.tailBytes
        ? Buffer.from(rest.subarray(rest.length - this.tailBytes))
        : Buffer.concat([this.tail, rest]).subarray(-this.tailBytes)
    }
    if (this.early && !wasOver && this.total > this.maxBytes) this.onCut({ head: Buffer.concat(this.pieces, this.held), tail: this.tail, bytes: this.total })
  }

  private end() {
    const line = this.pieces.length === 1 ? this.pieces[0]! : Buffer.concat(this.pieces, this.held)
    const { total, tail } = this
    this.clear()
    if (total <= this.maxBytes) this.onLine(line)
    else if (!this.early) this.onCut({ head: line, tail, bytes: total })
  }
}
