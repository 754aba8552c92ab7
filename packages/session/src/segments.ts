import { openSegmentIndex, type SegmentEntry, type Signer } from './integrity.ts'
import type { SessionStore, StoredSegment } from './store.ts'

/** What is wrong with a log's segments against its signed index: the first line concerned and why. */
export interface SegmentProblem {
  line: number
  reason: string
}

/** The closed segments of a log as its signed index names them, where they are, or what is wrong. */
export interface SegmentCheck {
  entries: SegmentEntry[]
  locations: string[]
  problem?: SegmentProblem
}

/**
 * Holds the closed segments a store finds for log `id` against the segment index it keeps, signed: the
 * same segments (numbers, starts, lengths), and an index that verifies. Returns the entries (empty for a
 * log of one piece, or a store that does not split logs), or the problem. A reader without the lock may
 * meet a rollover under way between its two reads: `settled` false then reads both again a few times
 * before it reports anything.
 */
export async function checkSegments(store: SessionStore, signer: Signer, id: string, settled: boolean): Promise<SegmentCheck> {
  if (!store.segments) return { entries: [], locations: [] }
  for (let attempt = 1; ; attempt++) {
    const found = await store.segments(id)
    const text = await store.readSegmentIndex?.(id)
    const result = compare(signer, id, store.locationOf(id), found, text)
    if (!result.problem || settled || attempt === 3) return result
  }
}

function compare(signer: Signer, id: string, file: string, found: { closed: StoredSegment[]; pending?: StoredSegment }, text: string | undefined): SegmentCheck {
  if (text === undefined) {
    if (!found.closed.length) return { entries: [], locations: [] }
    return { entries: [], locations: [], problem: { line: 1, reason: `${found.closed[0].location}:1: segment is in no segment index (the index was removed, or the file was put there by someone else)` } }
  }
  const entries = openSegmentIndex(signer, id, text)
  if (!entries) return { entries: [], locations: [], problem: { line: 1, reason: `${file}:1: the segment index of the log (${file}.segments) does not verify: it was edited, or taken from another session` } }
  // A rollover caught half done by a reader: its segment is still the live file, read as part of it.
  const closed = found.pending && entries.length === found.closed.length + 1 ? [...found.closed, found.pending] : found.closed
  for (let i = 0; i < Math.max(entries.length, closed.length); i++) {
    const entry = entries[i]
    const segment = closed[i]
    const line = i === 0 ? 1 : entries[i - 1].lastSeq + 2
    if (!segment) return { entries, locations: [], problem: { line, reason: `${file}:${line}: segment ${entry.n} of the log, which its signed index names (lines ${line}-${entry.lastSeq + 1}), is missing: it was removed` } }
    if (!entry) return { entries, locations: [], problem: { line, reason: `${segment.location}:${line}: segment is not in the signed segment index of the log: it was put there by someone else` } }
    if (segment.n !== entry.n || segment.start !== entry.start) return { entries, locations: [], problem: { line, reason: `${segment.location}:${line}: segment is not where the signed segment index places segment ${entry.n}: segments were removed or renamed` } }
    if (segment.length !== entry.length) return { entries, locations: [], problem: { line, reason: `${segment.location}:${line}: segment holds ${segment.length} bytes, its signed index says ${entry.length}: it was edited or cut` } }
  }
  return { entries, locations: closed.map((segment) => segment.location) }
}

/** The segment a logical line of the log is in, for a report about a log kept in segments; undefined: the live one. */
export function segmentOfLine(check: SegmentCheck, line: number): string | undefined {
  const at = check.entries.findIndex((entry) => line <= entry.lastSeq + 1)
  return at < 0 ? undefined : check.locations[at]
}
