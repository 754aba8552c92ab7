import { clip } from '@goalkeeper/kit'

// A decision reason comes from a third-party hook; it must not crowd out the cause.
const MAX_REASON_CHARS = 500

/** ` Decision: <reason>.`, the reason on one line and clipped, or '' without a reason. */
export function decisionText(reason: string | undefined): string {
  const text = reason?.replace(/\s+/g, ' ').trim()
  return text ? ` Decision: ${clip(text, MAX_REASON_CHARS)}.` : ''
}
