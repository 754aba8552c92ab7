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

  constructor(private id: string, private file: string, folds: Readonly<Record<string, SummaryFold>>, before?: RecordsBefore) {
    this.running = Object.entries(folds).map(([name, fold]) => [name, fold.start()])
    if (before) [this.header, this.count] = [before.header, before.count]
  }

  add(record: SessionRecord) {
    if (this.count === 0 && isRecordOf(record, 'session/header')) this.header = record.data
    // Counted as seqs: a fork that starts at its parent's checkpoint holds the parent's seqs.
    this.count = record.seq + 1
    this.updatedAt = record.at
    this.title ??= checkpointPart<SummaryPart>(record, SUMMARY_PART)?.title ?? titleOf(record)
    for (const [, run] of this.running) run.add(record)
  }

  build(integrity?: Integrity): SessionSummary {
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
export async function summarizeStream(id: string, file: string, chunks: AsyncIterable<Buffer>, signer?: Signer, folds: Readonly<Record<string, SummaryFold>> = {}, seal?: SealCheck): Promise<SessionSummary> {
  const builder = new SummaryBuilder(id, file, folds)
  const reader = new LogReader(file, id, signer, (record) => builder.add(record), seal)
  for await (const chunk of chunks) reader.push(chunk)
  reader.finish()
  return builder.build(reader.chain.integrity)
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
  const { id: _id, file: _file, folds: results, ...rest } = summary
  const kept: KeptSummary = { id, token, summary: rest, madeAt }
  const names = Object.keys(folds)
  // A log that cannot be read has no fold results; the versions still say that the folds were tried.
  if (names.length) kept.folds = Object.fromEntries(names.map((name) => [name, { version: folds[name].version, ...(results && { value: results[name] }) }]))
  return signKept(signer, kept)
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
