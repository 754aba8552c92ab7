const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff

/**
 * `text` cut to at most `max` characters (UTF-16 code units, as `length` counts them), the marker
 * included, ending in `marker` when it was cut. It never ends between the two halves of a surrogate pair,
 * so an emoji is dropped whole rather than left as an invalid half (which JSON and model APIs reject).
 */
export function clip(text: string, max: number, marker = '…'): string {
  if (text.length <= max) return text
  let end = Math.max(0, max - marker.length)
  if (end > 0 && isHighSurrogate(text.charCodeAt(end - 1))) end -= 1
  return text.slice(0, end) + marker
}

/** The last `max` characters of `text`, never starting between the two halves of a surrogate pair. */
export function tail(text: string, max: number): string {
  if (text.length <= max) return text
  const end = max > 0 ? text.slice(-max) : ''
  return isLowSurrogate(end.charCodeAt(0)) ? end.slice(1) : end
}
