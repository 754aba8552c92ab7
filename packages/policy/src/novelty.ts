import Schema from 'schemastery'
import { compilePatterns, digest, volatileMasker } from './fingerprint.ts'

/** How many keys an `Occurrences` remembers by default: far more than the calls of a long goal round. */
export const DEFAULT_OCCURRENCE_CAPACITY = 4096

/**
 * How often each key was seen, for "was this seen before in the goal": at most `capacity` keys are kept, the
 * least recently seen forgotten first, so memory and the cost of a lookup stay bounded however long a goal runs.
 */
export class Occurrences {
  private counts = new Map<string, number>()

  constructor(private capacity = DEFAULT_OCCURRENCE_CAPACITY) {}

  /** Counts one more sighting of `key` and returns how many there have been, this one included (1: new). */
  add(key: string): number {
    const count = (this.counts.get(key) ?? 0) + 1
    // Re-inserted so the map's order is least recently seen first.
    this.counts.delete(key)
    this.counts.set(key, count)
    if (this.counts.size > this.capacity) this.counts.delete(this.counts.keys().next().value!)
    return count
  }

  /** How often `key` was seen (0: never, or forgotten). */
  count(key: string): number {
    return this.counts.get(key) ?? 0
  }

  get size(): number {
    return this.counts.size
  }

  clear(): void {
    this.counts.clear()
  }
}

/**
 * What a tool answers when it found nothing: a blank result, the workspace search's `No matches for ...`, an
 * empty listing. Such a result brings no information whatever was asked, so it is never "new". Each entry is a
 * regular expression source, or `/source/flags`, tested against the whole result.
 */
export const DEFAULT_EMPTY_RESULTS: readonly string[] = [
  String.raw`^\s*$`,
  String.raw`^No matches for `,
  String.raw`/^\(?(?:empty|no (?:entries|files|results|matches))\b/i`,
]

/** A config field for empty-result patterns, DEFAULT_EMPTY_RESULTS by default; check it with `emptyResultMatcher(list, key)`. */
export const EmptyResults = Schema.array(Schema.string().min(1)).default([...DEFAULT_EMPTY_RESULTS])

/**
 * A test for results that found nothing (see DEFAULT_EMPTY_RESULTS). Throws a `Schema.ValidationError` naming
 * `key[index]` for an entry that is not a valid regular expression.
 */
export function emptyResultMatcher(patterns: readonly string[], key?: string): (content: string) => boolean {
  const regexes = compilePatterns(patterns, key, '')
  return (content) => regexes.some((regex) => regex.test(content))
}

/** What the fingerprint of a result is made of: a tool call's name, outcome and content. */
export interface ResultLike {
  name: string
  ok: boolean
  content: string
  error?: { code: string; message: string }
}

/**
 * The result fingerprint: the tool, the outcome (ok, or the error code and message) and the content, with
 * `mask` (the volatile patterns) applied, as a digest. Two calls that answered the same thing share it,
 * whatever their arguments.
 */
export function resultFingerprint(result: ResultLike, mask: (text: string) => string): string {
  const outcome = result.ok ? 'ok' : `error:${result.error?.code}\u0000${mask(result.error?.message ?? '')}`
  return digest(`${result.name}\u0000${outcome}\u0000${mask(result.content)}`)
}

/**
 * Which successful results bring something new to the goal: a result that is not empty (`emptyResults`) and
 * whose fingerprint (with `volatilePatterns` masked) was not seen before. Both lists are the plugin's config
 * fields of the same names; check them in the config with `emptyResultMatcher` and `volatileMasker`.
 */
export class NewResults {
  private seen: Occurrences
  private isEmpty: (content: string) => boolean
  private mask: (text: string) => string

  constructor(options: { emptyResults: readonly string[]; volatilePatterns: readonly string[] }, capacity?: number) {
    this.seen = new Occurrences(capacity)
    this.isEmpty = emptyResultMatcher(options.emptyResults)
    this.mask = volatileMasker(options.volatilePatterns)
  }

  /** Whether the call succeeded with a result that is not empty: it found something, new or not. */
  found(result: ResultLike): boolean {
    return result.ok && !this.isEmpty(result.content)
  }

  /** Remembers a result that found something; true when the goal had not seen it before. */
  add(result: ResultLike): boolean {
    return this.found(result) && this.seen.add(resultFingerprint(result, this.mask)) === 1
  }

  clear(): void {
    this.seen.clear()
  }
}
