import { distance } from 'fastest-levenshtein'

/** Past this length a text is compared only for equality: edit distance grows with the product of the lengths. */
export const MAX_SIMILARITY_CHARS = 10_000

/**
 * How alike two texts are, from 0 (nothing in common) to 1 (equal): one minus the edit distance over the
 * longer length. Texts longer than MAX_SIMILARITY_CHARS are 1 when equal and 0 otherwise.
 */
export function similarity(a: string, b: string): number {
  if (a === b) return 1
  const longer = Math.max(a.length, b.length)
  if (longer > MAX_SIMILARITY_CHARS) return 0
  return 1 - distance(a, b) / longer
}
