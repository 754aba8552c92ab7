import { clip, tail } from '@goalkeeper/kit'

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
  /** Set once the head stops growing; later text only feeds the tail, so the order stays intact. */
  headDone = false

  constructor(public max: number) {}

  push(text: string) {
    this.total += text.length
    if (!this.headDone) {
      const room = Math.ceil(this.max / 2) - this.head.length
      if (text.length < room) return void (this.head += text)
      // clip and tail never cut a surrogate pair in half.
      const head = clip(text, room, '')
      this.head += head
      text = text.slice(head.length)
      this.headDone = true
    }
    if (!text) return
    this.tail = tail(this.tail + text, Math.floor(this.max / 2))
  }

  toString() {
    const omitted = this.total - this.head.length - this.tail.length
    if (omitted <= 0) return this.head + this.tail
    return `${this.head}\n[... ${omitted} characters omitted; output capped at ${this.max} characters ...]\n${this.tail}`
  }
}

/** C0 controls and DEL, except tab, newline, carriage return and ESC (colour codes are text to a model). */
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001A\u001C-\u001F\u007F]/g

/** Replaces control bytes with U+FFFD, which every consumer (JSON, model APIs, terminals) handles; reports whether any were found. */
export function printable(text: string): { text: string; replaced: boolean } {
  let replaced = false
  const clean = text.replace(CONTROL, () => ((replaced = true), '\uFFFD'))
  return { text: clean, replaced }
}
