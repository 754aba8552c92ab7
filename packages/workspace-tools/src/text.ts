/** Same heuristic as git and grep: a NUL byte in the first 8000 bytes means binary. */
export const SNIFF_BYTES = 8000
export const looksBinary = (bytes: Uint8Array) => bytes.subarray(0, SNIFF_BYTES).includes(0)

export const countLines = (text: string) => (text ? text.split('\n').length - (text.endsWith('\n') ? 1 : 0) : 0)

export const lineAt = (text: string, index: number) => text.slice(0, index).split('\n').length

/** Sorts names by code unit so listings are identical on every machine and locale. */
export const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/** Directories that are never descended into: dependency trees and VCS internals drown real results. */
export const SKIPPED_DIRS = new Set(['node_modules', '.git', '.hg', '.svn'])

/**
 * Keeps the first and last halves of a stream of text within `max` characters, in bounded memory:
 * for command output the start shows what ran and the end shows how it finished.
 */
export class HeadTail {
  head = ''
  tail = ''
  total = 0

  constructor(public max: number) {}

  push(text: string) {
    this.total += text.length
    const half = Math.ceil(this.max / 2)
    if (this.head.length < half) {
      const take = half - this.head.length
      this.head += text.slice(0, take)
      text = text.slice(take)
    }
    if (text) this.tail = (this.tail + text).slice(-Math.floor(this.max / 2))
  }

  toString() {
    const omitted = this.total - this.head.length - this.tail.length
    if (omitted <= 0) return this.head + this.tail
    return `${this.head}\n[... ${omitted} characters omitted; output capped at ${this.max} characters ...]\n${this.tail}`
  }
}
