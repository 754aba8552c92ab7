import { createHash } from 'node:crypto'
import Schema from 'schemastery'

/**
 * What differs between two runs of the same thing without meaning anything: how long it took, when it ran,
 * where its temporary files went, which process it was. Each entry is a regular expression source, or
 * `/source/flags`; every match is masked before two results (or texts) are compared, so two identical
 * failures match whatever their timing.
 */
export const DEFAULT_VOLATILE_PATTERNS: readonly string[] = [
  // Durations: `1m 30s`, then `0.4 s`, `120ms`, `3 seconds`, `2 hours` (the exit footer's `after 0.4 s` too).
  String.raw`/\b(?:\d+h\s?)?\d+m\s?\d+(?:\.\d+)?s\b/gi`,
  String.raw`/\b\d+(?:\.\d+)?\s?(?:ns|µs|us|ms|s|secs?|seconds?|mins?|minutes?|h|hrs?|hours?)\b/gi`,
  // Timestamps: ISO 8601 date-times, times of day, `mm:ss.fff` clocks, epoch seconds or milliseconds (2017-2033).
  String.raw`\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?`,
  String.raw`\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b`,
  String.raw`\b\d{1,2}:\d{2}\.\d+\b`,
  String.raw`\b1[5-9]\d{8}(?:\d{3})?(?:\.\d+)?\b`,
  // Temporary directories: the generated first component below the temp root.
  String.raw`(?:/private)?/(?:tmp|var/tmp|var/folders/[^/\s]+/[^/\s]+/T)/[^/\s'"\x60:;,)\]]+`,
  // Process ids and memory addresses.
  String.raw`/\b(?:pid|process(?: id)?)\s*[:=#]?\s*\d+\b/gi`,
  String.raw`\b0x[0-9a-fA-F]{8,16}\b`,
]

const MASK = '\u00ab~\u00bb'

function compile(pattern: string, globalFlag: string): RegExp {
  const literal = /^\/(.+)\/([a-z]*)$/s.exec(pattern)
  const [source, flags] = literal ? [literal[1], literal[2]] : [pattern, '']
  const own = flags.replace('g', '')
  return new RegExp(source, `${own}${globalFlag}`)
}

/**
 * Compiles regular expression sources (or `/source/flags`), with the `g` flag when `globalFlag` is 'g' and
 * without it otherwise. Throws a `Schema.ValidationError` naming the entry (under `key`, the config field,
 * when given) when one is not valid, so a plugin's config check can call it as is.
 */
export function compilePatterns(patterns: readonly string[], key: string | undefined, globalFlag: 'g' | ''): RegExp[] {
  return patterns.map((pattern, index) => {
    try {
      return compile(pattern, globalFlag)
    } catch (error) {
      const path = key === undefined ? [index] : [key, index]
      throw new Schema.ValidationError(`is not a valid regular expression: ${(error as Error).message}`, { path })
    }
  })
}

/**
 * A function that masks every match of `patterns` (see DEFAULT_VOLATILE_PATTERNS for the syntax). Throws a
 * `Schema.ValidationError` naming the entry (under `key`, the config field, when given) when one is not a
 * valid regular expression, so a plugin's config check can call it as is.
 */
export function volatileMasker(patterns: readonly string[], key?: string): (text: string) => string {
  const regexes = compilePatterns(patterns, key, 'g')
  return (text) => regexes.reduce((masked, regex) => masked.replace(regex, MASK), text)
}

/**
 * A config field for volatile patterns, DEFAULT_VOLATILE_PATTERNS by default. Schemastery gives a transform no
 * path, so the plugin's config check compiles them: `volatileMasker(config.volatilePatterns, 'volatilePatterns')`.
 */
export const VolatilePatterns = Schema.array(Schema.string().min(1)).default([...DEFAULT_VOLATILE_PATTERNS])

/** A short digest of `text`, for comparing results or arguments without keeping them. */
export function digest(text: string): string {
  return createHash('sha256').update(text).digest('base64url')
}
