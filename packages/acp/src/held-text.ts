/**
 * Streamed text, masked before it is sent, without letting a secret through in pieces: a secret split
 * over two deltas is not recognised in either. The whole text so far is masked each time and only what
 * lies further than `hold` characters from its end is sent; what is held back follows with more text or
 * when the message is complete. Masking a longer text changes nothing that far back as long as no secret
 * is longer than `hold` (shaped secrets collapse to a short mask as soon as they are recognised).
 */
export class HeldText {
  private raw = ''
  private sent = 0

  constructor(private mask: (text: string) => string, private hold: number) {}

  /** Takes a delta; returns the masked text that is safe to send now, if any. */
  push(delta: string): string | undefined {
    this.raw += delta
    const masked = this.mask(this.raw)
    let safe = masked.length - this.hold
    // Never end a piece between the two halves of a surrogate pair.
    if (safe > 0 && /[\uD800-\uDBFF]/.test(masked[safe - 1])) safe -= 1
    if (safe <= this.sent) return undefined
    const piece = masked.slice(this.sent, safe)
    this.sent = safe
    return piece
  }

  /** The rest of the masked text, once `full` (the complete text) is known. */
  finish(full: string): string | undefined {
    const rest = this.mask(full).slice(this.sent)
    this.sent += rest.length
    return rest || undefined
  }
}
