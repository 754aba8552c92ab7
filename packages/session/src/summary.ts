import { clip } from '@goalkeeper/kit'
import type { SealCheck, Signer } from './integrity.ts'
import { LogReader } from './log-reader.ts'
import { checkpointPart, isRecordOf, type SessionHeaderData, type SessionRecord } from './records.ts'
import type { Integrity, Session, SessionSummary, SummaryFold, SummaryFoldRun } from './types.ts'

const TITLE_LENGTH = 80

/** The session service's own part of a checkpoint: what a listing of a session opened from it needs from before. */
export const SUMMARY_PART = 'summary'
export interface SummaryPart {
  title?: string
  /**
   * The state of every kept fold that can resume (`SummaryFold.resume`), by the fold's version, after the
   * record before the checkpoint; `from` is the seq its run started at: 0, unless the fold started at an
   * older checkpoint that did not carry it (then it saw the log from there on only).
   */
  folds?: Record<string, { from: number; state: unknown }>
}

/** What a fold made of the records a session holds, continued from the latest checkpoint that carried its state. */
export interface HeldFold<T> {
  result: T
  /** The run's state (`SummaryFoldRun.state`), when it has one. */
  state?: unknown
  /** The seq from which the fold saw the log: 0 for all of it; more when it starts where the held records do, with nothing carried from before. */
  from: number
  /** Index in the records where the run went on: the checkpoint it resumed at, else 0. */
  index: number
  /** The state it resumed from, when it did. */
  resumed?: unknown
}

function carriedState(record: SessionRecord, version: string): { from: number; state: unknown } | undefined {
  const carried = checkpointPart<SummaryPart>(record, SUMMARY_PART)?.folds?.[version]
  return carried && typeof carried === 'object' && Number.isInteger(carried.from) ? carried : undefined
}

/**
 * Runs `fold` over a session's records (`records[0].seq` being `firstSeq`): from the state carried by the last
 * checkpoint among them that holds one for it, else from the first record. So a session that let go of its
 * head, or was opened from a checkpoint, folds as its whole log does, as far as its checkpoints carried the fold.
 */
export function foldHeld<T>(records: readonly SessionRecord[], firstSeq: number, fold: SummaryFold<T>): HeldFold<T> {
  let index = 0
  let carried: { from: number; state: unknown } | undefined
  if (fold.resume) {
    for (let at = records.length - 1; at >= 0 && !carried; at--) {
      carried = carriedState(records[at], fold.version)
      if (carried) index = at
    }
  }
  const run = carried ? fold.resume!(carried.state) : fold.start()
  for (let at = index; at < records.length; at++) run.add(records[at])
  return {
    result: run.result(),
    ...(run.state && { state: run.state() }),
    from: carried ? carried.from : records.length ? records[0].seq : firstSeq,
    index,
    ...(carried && { resumed: carried.state }),
  }
}

/** `foldHeld` of an open session's records. */
export function foldSession<T>(session: Session, fold: SummaryFold<T>): HeldFold<T> {
  return foldHeld(session.records, session.firstSeq, fold)
}

/** The service's own checkpoint part: the title, and the state of each kept fold that can resume. */
export function summaryPart(session: Session, folds: Iterable<SummaryFold>): SummaryPart {
  const states: Record<string, { from: number; state: unknown }> = {}
  for (const fold of folds) {
    if (!fold.resume) continue
    const held = foldHeld(session.records, session.firstSeq, fold)
    if (held.state !== undefined) states[fold.version] = { from: held.from, state: held.state }
  }
  return { title: titleOfRecords(session.records), ...(Object.keys(states).length && { folds: states }) }
}

/** The title the records say: the first human prompt's, or the one a checkpoint carried from before it. */
export function titleOfRecords(records: readonly SessionRecord[]): string | undefined {
  for (const record of records) {
    const title = checkpointPart<SummaryPart>(record, SUMMARY_PART)?.title ?? titleOf(record)
    if (title !== undefined) return title
  }
}

/**
 * Text of the first human prompt, whitespace collapsed and shortened to about 80 characters. Reads the
 * message defensively: listing takes files as they are, and a plugin may have written a core type badly.
 */
export function titleOf(record: SessionRecord): string | undefined {
  const message = isRecordOf(record, 'input/queued') ? record.data?.message : isRecordOf(record, 'user/message') ? record.data : undefined
  if (message?.source?.kind !== 'human' || !Array.isArray(message.content)) return
  const block = message.content.find((b) => b?.type === 'text' && typeof b.text === 'string' && b.text.trim())
  if (!block) return
  const text = block.text.replace(/\s+/g, ' ').trim()
  return text.length <= TITLE_LENGTH ? text : `${clip(text, TITLE_LENGTH - 1, '').trimEnd()}…`
}

/** Accumulates a summary record by record, for files and in-memory sessions alike, with the folds asked for. */
class SummaryBuilder {
  private header?: SessionHeaderData
  private count = 0
  private updatedAt = 0
  private title?: string
  private running: [string, SummaryFoldRun][]
  /** Folds not started yet: those of a session held from a checkpoint start at its first record, from what it carried. */
  private waiting?: Readonly<Record<string, SummaryFold>>

  constructor(private id: string, private file: string, folds: Readonly<Record<string, SummaryFold>>, before?: RecordsBefore) {
    this.running = before ? [] : Object.entries(folds).map(([name, fold]) => [name, fold.start()])
    if (before) [this.header, this.count, this.waiting] = [before.header, before.count, folds]
  }

  add(record: SessionRecord) {
    if (this.waiting) {
      const carried = (fold: SummaryFold) => (fold.resume ? carriedState(record, fold.version) : undefined)
      this.running = Object.entries(this.waiting).map(([name, fold]) => [name, carried(fold) ? fold.resume!(carried(fold)!.state) : fold.start()])
      this.waiting = undefined
    }
    if (this.count === 0 && isRecordOf(record, 'session/header')) this.header = record.data
    // Counted as seqs: a fork that starts at its parent's checkpoint holds the parent's seqs.
    this.count = record.seq + 1
    this.updatedAt = record.at
    this.title ??= checkpointPart<SummaryPart>(record, SUMMARY_PART)?.title ?? titleOf(record)
    for (const [, run] of this.running) run.add(record)
  }

  build(integrity?: Integrity): SessionSummary {
    if (this.waiting) this.running = Object.entries(this.waiting).map(([name, fold]) => [name, fold.start()])
    const header = this.header!
    return {
      id: this.id,
      file: this.file,
      createdAt: header.createdAt,
      updatedAt: this.updatedAt,
      records: this.count,
      ...(this.title !== undefined && { title: this.title }),
      cwd: header.cwd,
      ...(header.parent && { parent: header.parent }),
      // Listed like a corrupt log, but with what it holds: show still reads it, resume refuses it.
      ...(integrity && problemOf(integrity, this.count, this.file) && { problem: problemOf(integrity, this.count, this.file) }),
      ...(this.running.length && { folds: Object.fromEntries(this.running.map(([name, run]) => [name, run.result()])) }),
    }
  }
}

/**
 * The listing problem of a log that reads but cannot be trusted or written as it is: tampered, cut
 * short, or unsigned (from before signing, not adopted). `lines` is the log's line count.
 */
export function problemOf(integrity: Integrity, lines: number, file: string): SessionSummary['problem'] {
  if (integrity.state === 'tampered') return { code: 'SESSION_TAMPERED', line: integrity.line, reason: integrity.reason, ...(integrity.otherKey && { otherKey: integrity.otherKey }) }
  if (integrity.state === 'truncated') return { code: 'SESSION_TRUNCATED', line: lines + 1, reason: integrity.reason }
  if (integrity.state === 'unsigned') return { code: 'SESSION_UNSIGNED', reason: `${file}: the log is not signed (written before signing, or its signatures were removed)` }
}

/** What a session opened from a checkpoint holds apart from its records: its header and how many records came before. */
export interface RecordsBefore {
  header: SessionHeaderData
  count: number
}

export function summarizeRecords(id: string, file: string, records: readonly SessionRecord[], integrity?: Integrity, folds: Readonly<Record<string, SummaryFold>> = {}, before?: RecordsBefore): SessionSummary {
  const builder = new SummaryBuilder(id, file, folds, before)
  for (const record of records) builder.add(record)
  return builder.build(integrity)
}

/**
 * The summary of a session open in this process, from memory, of its records up to `durableSeq` (all by
 * default). One that holds its records from a checkpoint on counts those before and keeps its header apart.
 */
export function summarizeSession(session: Session, folds: Readonly<Record<string, SummaryFold>> = {}, durableSeq?: number): SessionSummary {
  const before = session.firstSeq > 0 ? { header: session.header, count: session.firstSeq } : undefined
  const records = durableSeq === undefined ? session.records : session.records.slice(0, Math.max(0, durableSeq - session.firstSeq + 1))
  return summarizeRecords(session.id, session.file, records, session.integrity, folds, before)
}

/**
 * Summarises a session file while streaming it, so listing many large sessions holds one chunk at a
 * time. Applies the replay rules: a torn last line is ignored, any other bad line fails. With a
 * signer, the mac chain is checked on the way (as `open` does), so a tampered log is marked.
 */
export async function summarizeStream(id: string, file: string, chunks: AsyncIterable<Buffer>, signer?: Signer, folds: Readonly<Record<string, SummaryFold>> = {}, seal?: SealCheck | Promise<SealCheck>): Promise<SessionSummary> {
  const builder = new SummaryBuilder(id, file, folds)
  // The log's first chunk is asked for before the seal is waited for: both reads go on at once.
  const iterator = chunks[Symbol.asyncIterator]()
  const first = iterator.next()
  // Its failure (the log gone, say) is thrown where it is awaited, below: not an unhandled rejection meanwhile.
  first.catch(() => {})
  let ended = false
  let reader: LogReader
  try {
    reader = new LogReader(file, id, signer, (record) => builder.add(record), await seal)
    for (let next = await first; !next.done; next = await iterator.next()) reader.push(next.value)
    ended = true
    reader.finish()
  } finally {
    // Stopped early (a bad line, the seal unreadable): the log's handle is let go.
    if (!ended) await iterator.return?.().catch(() => {})
  }
  return builder.build(reader!.chain.integrity)
}

/**
 * What a kept summary's mac is bound to besides its session: changed whenever what a summary says for the
 * same log changes (v2: seals, unsigned logs and seq breaks are problems), so older summaries are rebuilt.
 */
const SUMMARY_DOMAIN = 'summary-v2'

/** A summary as kept for listing: bound to one version of its log, with the fold results and their versions. */
export interface KeptSummary {
  id: string
  /** The log's `version` token when it was summarised; any other token means the log changed since. */
  token: string
  summary: Omit<SessionSummary, 'id' | 'file' | 'folds'>
  folds?: Record<string, { version: string; value?: unknown }>
  /** When the entry was made (epoch ms): of two entries kept for one session, the later one counts. */
  madeAt?: number
  /** The log was removed (by `discard`): the entry says so, and listings leave the session out. */
  removed?: true
}

/**
 * The text kept for a summary: `<mac> <json>`, the mac (same key as the logs) over the session id and
 * the JSON, which binds the summary to its session and to the log's version. Without the key a summary
 * cannot be forged or moved to another session, and one left from an earlier version of the log is stale.
 */
export function keptSummary(signer: Signer, id: string, token: string, summary: SessionSummary, folds: Readonly<Record<string, SummaryFold>>, madeAt = Date.now()): string {
  return keptEntry(signer, id, token, summary, folds, madeAt).text
}

/** `keptSummary` with the entry it holds (as `openKept` would read it back: JSON values only). */
export function keptEntry(signer: Signer, id: string, token: string, summary: SessionSummary, folds: Readonly<Record<string, SummaryFold>>, madeAt = Date.now()): { entry: KeptSummary; text: string } {
  const { id: _id, file: _file, folds: results, ...rest } = summary
  const kept: KeptSummary = { id, token, summary: rest, madeAt }
  const names = Object.keys(folds)
  // A log that cannot be read has no fold results; the versions still say that the folds were tried.
  if (names.length) kept.folds = Object.fromEntries(names.map((name) => [name, { version: folds[name].version, ...(results && { value: results[name] }) }]))
  const text = signKept(signer, kept)
  return { entry: JSON.parse(text.slice(text.indexOf(' ') + 1)) as KeptSummary, text }
}

/** The kept entry of a removed log: listings leave it out until the index forgets it. */
export function keptRemoval(signer: Signer, id: string, madeAt = Date.now()): string {
  return signKept(signer, { id, token: '', summary: { createdAt: 0, updatedAt: 0, records: 0, cwd: '' }, madeAt, removed: true })
}

function signKept(signer: Signer, kept: KeptSummary): string {
  const body = JSON.stringify(kept)
  return `${signer.mac(`${SUMMARY_DOMAIN}\n${kept.id}`, body)} ${body}`
}

/** A kept summary whose mac verifies for this session, or undefined (then the log is read again). */
export function openKept(signer: Signer, id: string, text: string): KeptSummary | undefined {
  const space = text.indexOf(' ')
  if (space !== 64) return
  const body = text.slice(space + 1)
  if (signer.mac(`${SUMMARY_DOMAIN}\n${id}`, body) !== text.slice(0, space)) return
  try {
    const kept = JSON.parse(body) as KeptSummary
    return kept?.id === id && typeof kept.token === 'string' && typeof kept.summary === 'object' ? kept : undefined
  } catch {
    return undefined
  }
}
