import type { Signer } from './integrity.ts'
import { type KeptSummary, openKept } from './summary.ts'

/**
 * The listing's index of kept summaries, as a store keeps it (`SummaryIndexStore`): a compacted part,
 * rewritten now and then, and a journal of entries appended since. The compacted part is
 *
 *     goalkeeper-summaries 2 <directory bytes> <directory mac>\n
 *     <directory: JSON {rows, blocks: [[bytes, rows, mac]...], ids: [[first id, bytes, mac]...], entries}>\n
 *     <row blocks: "<id> <updatedAt> <madeAt> <offset> <length>\n" per session, newest activity first>
 *     <id blocks: "<id>\n" per session, in id order>
 *     <entries: "<mac> <json>\n" each, the kept summary of one session, at <offset> after the id blocks>
 *
 * The table is cut into blocks of `ROWS_PER_BLOCK` rows, each with its own mac, and the directory
 * (signed) lists every block's length and mac in order: so "the N most recent" reads the directory
 * and the head blocks it needs (one mac each), then the N entries it shows (one mac each), never the
 * whole table; a block edited, moved to another place, taken from another index or signed with
 * another key fails its place's mac. The id blocks answer "does the table name this session" (the
 * journal's sessions) by reading one block. A journal line is `<id> <mac> <json>\n`. Every part is
 * signed with the key of the logs: whatever does not verify is never trusted.
 */
const MAGIC = 'goalkeeper-summaries 2'
const DIRECTORY_DOMAIN = 'summary-index-v2'
const ROWS_DOMAIN = 'summary-index-v2-rows'
const IDS_DOMAIN = 'summary-index-v2-ids'
/** Rows per block: the 50 most recent read one block (about 30 KB), whatever the number of sessions. */
export const ROWS_PER_BLOCK = 512
const IDS_PER_BLOCK = 2048
/** Read at once with the header line: the directory of an index of 100,000 sessions fits. */
const HEAD_BYTES = 1 << 16

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

/** A part of the index that does not verify or is not there: the index is not used, and is rebuilt. */
export class IndexError extends Error {}
/** An index of an earlier format (one mac over the whole table): rebuilt as a missing one is, silently. */
export class EarlierIndex extends IndexError {}

export interface OpenedIndex {
  /** How many rows the table holds. */
  count: number
  /**
   * The first `n` rows (all when fewer), newest activity first (ties: id descending), as the table
   * holds them: only the blocks they are in are read and verified. Throws an `IndexError` when one
   * does not verify.
   */
  head(n: number): Promise<IndexRow[]>
  /** Which of `ids` the table names (reading their id blocks); throws an `IndexError` when one does not verify. */
  names(ids: Iterable<string>): Promise<Set<string>>
  /** The kept summary of a row, or undefined when its entry does not verify. */
  entry(row: IndexRow): Promise<Kept | undefined>
  /** Every entry that verifies, read at once, every block verified; throws an `IndexError` when one does not. */
  all(): Promise<Map<string, Kept>>
}

/** Newest activity first, ties by id descending: the order listings show. */
export function byRecency(a: { updatedAt: number; id: string }, b: { updatedAt: number; id: string }): number {
  return b.updatedAt - a.updatedAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)
}

interface Directory {
  rows: number
  /** Row blocks: byte length, rows, mac. */
  blocks: [number, number, string][]
  /** Id blocks: first id, byte length, mac. */
  ids: [string, number, string][]
  /** Bytes of the entries. */
  entries: number
}

/** The compacted index holding `entries`, signed. `rowsPerBlock` is for tests (blocks of a few rows). */
export function encodeIndex(signer: Signer, entries: ReadonlyMap<string, IndexEntry>, rowsPerBlock = ROWS_PER_BLOCK): Buffer {
  const sorted = [...entries].map(([id, entry]) => ({ id, ...entry })).sort(byRecency)
  const directory: Directory = { rows: sorted.length, blocks: [], ids: [], entries: 0 }
  const parts: Buffer[] = []
  const bodies: Buffer[] = []
  let offset = 0
  for (let at = 0; at < sorted.length; at += rowsPerBlock) {
    let block = ''
    const rows = sorted.slice(at, at + rowsPerBlock)
    for (const { id, text, updatedAt, madeAt } of rows) {
      const body = Buffer.from(`${text}\n`)
      block += `${id} ${updatedAt} ${madeAt} ${offset} ${body.length}\n`
      bodies.push(body)
      offset += body.length
    }
    const bytes = Buffer.from(block)
    directory.blocks.push([bytes.length, rows.length, signer.mac(ROWS_DOMAIN, block)])
    parts.push(bytes)
  }
  const ids = sorted.map(({ id }) => id).sort()
  for (let at = 0; at < ids.length; at += IDS_PER_BLOCK) {
    const block = `${ids.slice(at, at + IDS_PER_BLOCK).join('\n')}\n`
    const bytes = Buffer.from(block)
    directory.ids.push([ids[at], bytes.length, signer.mac(IDS_DOMAIN, block)])
    parts.push(bytes)
  }
  directory.entries = offset
  const text = JSON.stringify(directory)
  const head = `${MAGIC} ${Buffer.byteLength(text)} ${signer.mac(DIRECTORY_DOMAIN, text)}\n${text}\n`
  return Buffer.concat([Buffer.from(head), ...parts, ...bodies])
}

/** The compacted index, its directory verified; throws an error saying what is wrong with it otherwise. */
export async function openIndex(signer: Signer, reader: IndexReader, size: number): Promise<OpenedIndex> {
  let first = await reader.read(0, Math.min(size, HEAD_BYTES))
  const end = first.indexOf(10)
  const words = first.toString('latin1', 0, Math.max(0, end)).split(' ')
  if (words.slice(0, 2).join(' ') === 'goalkeeper-summaries 1') throw new EarlierIndex('it is of an earlier format')
  if (end < 0 || words.slice(0, 2).join(' ') !== MAGIC || words.length !== 4) throw new IndexError('it is not an index of session summaries (its first line is not the expected header)')
  const directoryBytes = Number(words[2])
  const start = end + 1
  if (!Number.isInteger(directoryBytes) || start + directoryBytes + 1 > size) throw new IndexError('it is cut short (shorter than its header says)')
  if (start + directoryBytes > first.length) first = await reader.read(0, start + directoryBytes)
  const text = first.toString('utf8', start, start + directoryBytes)
  if (signer.mac(DIRECTORY_DOMAIN, text) !== words[3]) throw new IndexError('its directory does not verify with the session key (changed by someone other than goalkeeper)')
  const directory = JSON.parse(text) as Directory
  // Where each block starts: the row blocks after the directory, then the id blocks, then the entries.
  const rowsAt: number[] = []
  let at = start + directoryBytes + 1
  for (const [bytes] of directory.blocks) {
    rowsAt.push(at)
    at += bytes
  }
  const idsAt: number[] = []
  for (const [, bytes] of directory.ids) {
    idsAt.push(at)
    at += bytes
  }
  const entries = at
  if (entries + directory.entries > size) throw new IndexError('it is cut short (shorter than its directory says)')

  const verified = (domain: string, bytes: Buffer, mac: string, what: string): string => {
    const block = bytes.toString('utf8')
    if (signer.mac(domain, block) !== mac) throw new IndexError(`its ${what} does not verify with the session key (changed, moved or taken from another index)`)
    return block
  }
  const rowBlocks: IndexRow[][] = []
  /** Reads row blocks [from, to) in one read. */
  const readRows = async (from: number, to: number) => {
    if (from >= to) return
    const bytes = await reader.read(rowsAt[from], rowsAt[to - 1] + directory.blocks[to - 1][0] - rowsAt[from])
    for (let i = from; i < to; i++) {
      const [length, rows, mac] = directory.blocks[i]
      const offset = rowsAt[i] - rowsAt[from]
      const block = parseTable(verified(ROWS_DOMAIN, bytes.subarray(offset, offset + length), mac, `table block ${i + 1}`))
      if (block.length !== rows) throw new IndexError(`its table block ${i + 1} does not hold the rows its directory says`)
      rowBlocks[i] = block
    }
  }
  const idBlocks = new Map<number, Set<string>>()
  const readIds = async (i: number) => {
    const [, length, mac] = directory.ids[i]
    const block = verified(IDS_DOMAIN, await reader.read(idsAt[i], length), mac, `id block ${i + 1}`)
    idBlocks.set(i, new Set(block.split('\n').slice(0, -1)))
  }
  const open = (row: IndexRow, bytes: Buffer, at: number): Kept | undefined => {
    if (at + row.length > bytes.length) return undefined
    const text = bytes.toString('utf8', at, at + row.length - 1)
    const entry = openKept(signer, row.id, text)
    return entry && { entry, text }
  }
  const head = async (n: number) => {
    let blocks = 0
    for (let rows = 0; blocks < directory.blocks.length && rows < n; blocks++) rows += directory.blocks[blocks][1]
    // Blocks are read in order, so the ones read are always the first ones.
    await readRows(rowBlocks.length, blocks)
    return rowBlocks.slice(0, blocks).flat().slice(0, n)
  }
  return {
    count: directory.rows,
    head,
    names: async (ids) => {
      const named = new Set<string>()
      for (const id of ids) {
        // The last id block whose first id is not after this one.
        let low = 0
        let high = directory.ids.length
        while (low < high) {
          const middle = (low + high) >> 1
          if (directory.ids[middle][0] <= id) low = middle + 1
          else high = middle
        }
        if (low === 0) continue
        if (!idBlocks.has(low - 1)) await readIds(low - 1)
        if (idBlocks.get(low - 1)!.has(id)) named.add(id)
      }
      return named
    },
    entry: async (row) => open(row, await reader.read(entries + row.offset, row.length), 0),
    all: async () => {
      const rows = await head(directory.rows)
      if (rows.length !== directory.rows) throw new IndexError('its table does not hold the rows its directory says')
      let named = 0
      for (let i = 0; i < directory.ids.length; i++) {
        if (!idBlocks.has(i)) await readIds(i)
        named += idBlocks.get(i)!.size
      }
      if (named !== directory.rows) throw new IndexError('its id blocks do not hold the sessions its directory says')
      const bytes = await reader.read(entries, directory.entries)
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
  // By hand rather than split: a whole listing parses every row, 100,000 times for as many sessions.
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
