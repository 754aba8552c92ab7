import type { Signer } from './integrity.ts'
import { type KeptSummary, openKept } from './summary.ts'

/**
 * The listing's index of kept summaries, as a store keeps it (`SummaryIndexStore`): a compacted part,
 * rewritten now and then, and a journal of entries appended since. The compacted part is
 *
 *     goalkeeper-summaries 1 <table bytes> <table mac>\n
 *     <table: "<id> <updatedAt> <madeAt> <offset> <length>\n" per session, newest activity first>
 *     <entries: "<mac> <json>\n" each, the kept summary of one session, at <offset> after the table>
 *
 * so "the N most recent" reads the table (one mac over it) and then the N entries it shows (one mac
 * each), never the whole file. A journal line is `<id> <mac> <json>\n`. Every part is signed with
 * the key of the logs: whatever does not verify is never trusted.
 */
const MAGIC = 'goalkeeper-summaries 1'
const TABLE_DOMAIN = 'summary-index-v1'
/** More than a header line ever holds. */
export const HEAD_BYTES = 256

export interface IndexRow {
  id: string
  updatedAt: number
  /** When the entry was made (epoch ms): of two entries for one session, the later one counts. */
  madeAt: number
  offset: number
  length: number
}

/** An entry to keep: its signed text (`keptSummary`), with what the table needs in clear. */
export interface IndexEntry {
  text: string
  updatedAt: number
  madeAt: number
}

/** Reads byte ranges of a compacted index file. */
export interface IndexReader {
  read(start: number, length: number): Promise<Buffer>
}

/** A kept summary, verified, with the signed text it was read from (kept as it is by a compaction). */
export interface Kept {
  entry: KeptSummary
  text: string
}

export interface OpenedIndex {
  /** Newest activity first (ties: id descending), as the table holds them. */
  rows: IndexRow[]
  /** The kept summary of a row, or undefined when its entry does not verify. */
  entry(row: IndexRow): Promise<Kept | undefined>
  /** Every entry that verifies, read at once. */
  all(): Promise<Map<string, Kept>>
}

/** Newest activity first, ties by id descending: the order listings show. */
export function byRecency(a: { updatedAt: number; id: string }, b: { updatedAt: number; id: string }): number {
  return b.updatedAt - a.updatedAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)
}

/** The compacted index holding `entries`, signed. */
export function encodeIndex(signer: Signer, entries: ReadonlyMap<string, IndexEntry>): Buffer {
  const sorted = [...entries].map(([id, entry]) => ({ id, ...entry })).sort(byRecency)
  let table = ''
  const bodies: Buffer[] = []
  let offset = 0
  for (const { id, text, updatedAt, madeAt } of sorted) {
    const body = Buffer.from(`${text}\n`)
    table += `${id} ${updatedAt} ${madeAt} ${offset} ${body.length}\n`
    bodies.push(body)
    offset += body.length
  }
  const head = `${MAGIC} ${Buffer.byteLength(table)} ${signer.mac(TABLE_DOMAIN, table)}\n`
  return Buffer.concat([Buffer.from(head + table), ...bodies])
}

/** The compacted index, its table verified; throws an error saying what is wrong with it otherwise. */
export async function openIndex(signer: Signer, reader: IndexReader, size: number): Promise<OpenedIndex> {
  const first = (await reader.read(0, Math.min(size, HEAD_BYTES))).toString('latin1')
  const end = first.indexOf('\n')
  const words = first.slice(0, end).split(' ')
  const [length, mac] = words.slice(2)
  if (end < 0 || words.slice(0, 2).join(' ') !== MAGIC) throw new Error('it is not an index of session summaries (its first line is not the expected header)')
  const tableBytes = Number(length)
  const start = end + 1
  if (!Number.isInteger(tableBytes) || start + tableBytes > size) throw new Error('it is cut short (its table is shorter than its header says)')
  const table = (await reader.read(start, tableBytes)).toString('utf8')
  if (signer.mac(TABLE_DOMAIN, table) !== mac) throw new Error('its table does not verify with the session key (changed by someone other than goalkeeper)')
  const rows = parseTable(table)
  const entries = start + tableBytes
  const open = (row: IndexRow, bytes: Buffer, at: number): Kept | undefined => {
    if (at + row.length > bytes.length) return undefined
    const text = bytes.toString('utf8', at, at + row.length - 1)
    const entry = openKept(signer, row.id, text)
    return entry && { entry, text }
  }
  return {
    rows,
    entry: async (row) => open(row, await reader.read(entries + row.offset, row.length), 0),
    all: async () => {
      const bytes = await reader.read(entries, size - entries)
      const all = new Map<string, Kept>()
      for (const row of rows) {
        const kept = open(row, bytes, row.offset)
        if (kept) all.set(row.id, kept)
      }
      return all
    },
  }
}

function parseTable(table: string): IndexRow[] {
  const rows: IndexRow[] = []
  // By hand rather than split: this runs once per row of the index, 100,000 times for as many sessions.
  for (let at = 0, end = table.indexOf('\n'); end >= 0; at = end + 1, end = table.indexOf('\n', at)) {
    const a = table.indexOf(' ', at)
    const b = table.indexOf(' ', a + 1)
    const c = table.indexOf(' ', b + 1)
    const d = table.indexOf(' ', c + 1)
    rows.push({ id: table.slice(at, a), updatedAt: +table.slice(a + 1, b), madeAt: +table.slice(b + 1, c), offset: +table.slice(c + 1, d), length: +table.slice(d + 1, end) })
  }
  return rows
}

/** A journal line for an entry. */
export function journalLine(id: string, text: string): string {
  return `${id} ${text}\n`
}

/**
 * The entries of a journal, the latest per session. A torn last line (a writer killed mid-append) is
 * skipped; any other line that does not verify throws: the journal was changed by someone else.
 */
export function readJournal(signer: Signer, journal: Buffer): Map<string, Kept> {
  const entries = new Map<string, Kept>()
  const all = journal.toString('utf8')
  let lineNo = 0
  for (let at = 0, end = all.indexOf('\n'); end >= 0; at = end + 1, end = all.indexOf('\n', at)) {
    lineNo++
    const line = all.slice(at, end)
    const space = line.indexOf(' ')
    const text = line.slice(space + 1)
    const entry = space > 0 ? openKept(signer, line.slice(0, space), text) : undefined
    if (!entry) throw new Error(`its journal line ${lineNo} does not verify with the session key (changed by someone other than goalkeeper)`)
    const known = entries.get(entry.id)
    if (!known || (known.entry.madeAt ?? 0) <= (entry.madeAt ?? 0)) entries.set(entry.id, { entry, text })
  }
  return entries
}
