import type { Signer } from './integrity.ts'
import type { SummaryIndexStore } from './store.ts'
import { EarlierIndex, encodeIndex, type IndexEntry, type Kept, journalLine, type OpenedIndex, openIndex, readJournal } from './summary-index.ts'

/** An index as the service reads it: verified, or with the reason it is not used. */
export interface LoadedIndex {
  opened?: OpenedIndex
  /** Every entry of the compacted part that verifies, when loaded `whole`. */
  entries?: Map<string, Kept>
  /** The latest journal entry per session. */
  journal: Map<string, Kept>
  journalBytes: number
  /** Why the index is not used (it is rebuilt from the logs): it does not verify, is cut, or cannot be read. */
  problem?: string
  /** Releases the compacted part's file; call once done with `opened`. */
  close(): Promise<void>
}

/** Journal size past which a listing folds the journal into the compacted part. */
export const COMPACT_BYTES = 1 << 20

const none = async () => {}

/**
 * The index of `store`, verified: its directory's mac, every journal line's, and `whole`, every block
 * of its table (its entries read at once). Never throws.
 */
export async function loadIndex(signer: Signer, store: SummaryIndexStore, options: { whole?: boolean } = {}): Promise<LoadedIndex> {
  let read
  try {
    read = await store.read()
  } catch (error) {
    return { journal: new Map(), journalBytes: 0, problem: `it cannot be read: ${(error as Error).message}`, close: none }
  }
  const close = read.compacted ? () => read.compacted!.close() : none
  try {
    const journal = readJournal(signer, read.journal)
    const opened = read.compacted && (await openIndex(signer, read.compacted, read.compacted.size))
    const entries = options.whole ? ((await opened?.all()) ?? new Map()) : undefined
    return { opened, entries, journal, journalBytes: read.journal.length, close }
  } catch (error) {
    await close().catch(() => {})
    // Made by an earlier version of goalkeeper: built again as a missing index is, with nothing to report.
    if (error instanceof EarlierIndex) return { journal: new Map(), journalBytes: 0, close: none }
    return { journal: new Map(), journalBytes: 0, problem: (error as Error).message, close: none }
  }
}

/** The later of two entries for one session (the one made last). */
export function later(a: Kept | undefined, b: Kept | undefined): Kept | undefined {
  if (!a || !b) return a ?? b
  return (b.entry.madeAt ?? 0) >= (a.entry.madeAt ?? 0) ? b : a
}

/** Appends entries to the journal in one write. */
export async function appendEntries(store: SummaryIndexStore, entries: Iterable<[string, string]>): Promise<void> {
  let lines = ''
  for (const [id, text] of entries) if (!text.includes('\n')) lines += journalLine(id, text)
  if (lines) await store.append(lines)
}

/**
 * Folds the journal into the compacted part. `base` is what the compacted part should hold (a listing
 * that checked every log knows it); without it, the current compacted part is kept. Journal entries
 * made after `since` are folded in over the base, removed sessions left out. False: another process
 * holds the index lock (nothing is lost: the journal stays for the next one).
 */
export async function compactIndex(signer: Signer, store: SummaryIndexStore, base?: ReadonlyMap<string, Kept>, since = 0): Promise<boolean> {
  return store.compact(async (journalBytes, compacted) => {
    let merged: Map<string, Kept> = new Map(base ?? [])
    if (!base && compacted) merged = await openIndex(signer, compacted, compacted.size).then((opened) => opened.all(), () => new Map())
    let journal: Map<string, Kept>
    try {
      journal = readJournal(signer, journalBytes)
    } catch {
      // A journal that does not verify is not folded in: what it says is read from the logs instead.
      journal = new Map()
    }
    for (const [id, kept] of journal) {
      if (base && !base.has(id) && (kept.entry.madeAt ?? 0) < since) continue
      merged.set(id, later(merged.get(id), kept)!)
    }
    const entries = new Map<string, IndexEntry>()
    for (const [id, { entry, text }] of merged) {
      if (!entry.removed) entries.set(id, { text, updatedAt: entry.summary.updatedAt, madeAt: entry.madeAt ?? 0 })
    }
    return encodeIndex(signer, entries)
  })
}
