import { encodeRecord, HEADER, headerOf } from './codec.ts'
import type { AppendData, Appended, SessionHeaderData, SessionRecord } from './records.ts'
import type { CheckpointEntry, Signer } from './integrity.ts'
import type { Appender, StoreWriter } from './store.ts'
import { type Integrity, type RepairReport, type Session, SessionError } from './types.ts'

/** What a session needs from the service that owns it. */
export interface SessionHost {
  now(): number
  signer?: Signer
  /** Masks known secrets in record data before it is recorded. */
  mask?<T>(data: T): T
  /** Size limit of a log in bytes: once reached, one `session/full` record is written and nothing after it. */
  maxBytes?: number
  appended(session: SessionImpl, record: SessionRecord): void
}

/** Where the records of a session opened from its last checkpoint start, and its header, read apart. */
export interface TailStart {
  firstSeq: number
  header: SessionHeaderData
}

const CHECKPOINT = 'session/checkpoint'
/** Where a live session lets go of what precedes its last durable checkpoint (see `released`). */
const TURN_START = 'turn/start'

/** A checkpoint of this session's log: its seq and the byte it starts at. */
interface CheckpointMark {
  seq: number
  offset: number
}

export class SessionImpl implements Session {
  repair?: RepairReport
  integrity: Integrity = { state: 'unsigned' }
  /** The mac the next appended line chains from. */
  lastMac = ''
  /** Present while the session is writable. */
  writer?: Appender
  storeWriter?: StoreWriter
  private list: SessionRecord[]
  /** Seq of `list[0]`: 0, or the checkpoint a session opened from its tail starts at. */
  firstSeq = 0
  /** The header, kept apart for a session whose records start at a checkpoint. */
  private head?: SessionHeaderData
  /** Seq of the last `session/checkpoint` record (-1: none yet). */
  checkpointSeq = -1
  private lastAt = 0
  /** Bytes of the log as written and queued; set when the session becomes writable. */
  bytes = 0
  /** Byte offset of `records[0]` in the log: what this process holds of it is `bytes - base`. */
  base = 0
  /** A checkpoint appended whose index entry is written once it is durable. */
  pendingCheckpoint?: CheckpointEntry
  /** The index write under way, awaited before the writer lock is let go. */
  indexWrite: Promise<void> = Promise.resolve()
  /** The last checkpoint appended here, until it is durable. */
  private written?: CheckpointMark
  /** The last durable checkpoint whose predecessors are still held: let go of at the next `turn/start`. */
  private releasable?: CheckpointMark
  private full = false
  /** The background check of the log before the checkpoint a writable open started from. */
  headCheck?: { stop: AbortController; done: Promise<void> }
  private state: 'open' | 'closing' | 'closed' = 'open'

  constructor(private host: SessionHost, readonly id: string, readonly file: string, records: SessionRecord[], tail?: TailStart) {
    this.list = records
    this.attach(records, undefined, undefined, tail)
  }

  get header(): SessionHeaderData {
    return this.head ?? headerOf(this.list)
  }

  /** Seq of the record after the last one. */
  get nextSeq(): number {
    return this.firstSeq + this.list.length
  }

  get records(): readonly SessionRecord[] {
    return this.list
  }

  get readOnly(): boolean {
    return !this.writer
  }

  get closed(): boolean {
    return this.state === 'closed'
  }

  append<K extends string>(type: K, data: AppendData<K>): Appended<K> {
    if (this.state !== 'open') throw new SessionError('SESSION_CLOSED', `session ${this.id} is closed`, this.file)
    if (!this.writer) throw new SessionError('SESSION_READ_ONLY', `session ${this.id} is open read-only`, this.file)
    if (typeof type !== 'string' || type === '') throw new TypeError('record type must be a non-empty string')
    if (type === HEADER) throw new TypeError(`${HEADER} is written by create and fork, not appended`)
    // What precedes a durable checkpoint goes once the next turn starts: the last turn stays readable
    // until then (its answer and outcome are what a command prints when its work ends).
    if (type === TURN_START && this.releasable) this.release(this.releasable)
    const max = this.host.maxBytes
    if (!this.full && max !== undefined && this.bytes - this.base >= max) {
      // The reason goes on record, then nothing more: a log that grows without bound can no longer be opened.
      this.full = true
      this.write('session/full', { maxBytes: max, bytes: this.bytes })
      this.writer.seal(new SessionError('SESSION_FULL', `session ${this.id} reached its size limit of ${mebibytes(max)} (maxSessionBytes of the session plugin); later records are kept in memory only`, this.file))
    }
    return this.write(type, data) as Appended<K>
  }

  private write<T>(type: string, data: T): SessionRecord<T> {
    const seq = this.nextSeq
    // The clock may step back (NTP, a VM resume); `at` must not.
    const at = Math.max(this.host.now(), this.lastAt)
    const encoded = encodeRecord(seq, at, type, this.host.mask ? this.host.mask(data) : data)
    let { line } = encoded
    const before = this.lastMac
    // A log signed per batch gets its lines signed by the writer, as it writes them.
    const batched = this.writer!.signsBatches
    if (this.host.signer && !batched) ({ line, mac: this.lastMac } = this.host.signer.sign(this.lastMac, line))
    if (type === CHECKPOINT && this.host.signer && this.integrity.state === 'signed') {
      // Batched: the writer starts a batch at the checkpoint and gives its offset and the mac before it.
      this.pendingCheckpoint = { seq, offset: batched ? -1 : this.bytes, mac: batched ? '' : before, prefix: this.integrity.unsignedPrefix }
    }
    const { record } = encoded
    this.list.push(record)
    if (type === CHECKPOINT) {
      this.checkpointSeq = seq
      this.written = { seq, offset: this.bytes }
    }
    this.lastAt = at
    this.writer!.push(`${line}\n`, seq, batched && type === CHECKPOINT)
    this.bytes += Buffer.byteLength(line) + 1
    this.host.appended(this, record as SessionRecord)
    return record as SessionRecord<T>
  }

  /**
   * Replaces the records and the writer in place: how a read-only session becomes writable while
   * every holder keeps the same object.
   */
  attach(records: SessionRecord[], storeWriter?: StoreWriter, writer?: Appender, tail?: TailStart) {
    if (this.list !== records) {
      this.list.length = 0
      for (const record of records) this.list.push(record)
    }
    this.firstSeq = tail?.firstSeq ?? 0
    this.head = tail?.header
    this.written = this.releasable = undefined
    for (const record of records) {
      if (record.at > this.lastAt) this.lastAt = record.at
      if (record.type === CHECKPOINT) this.checkpointSeq = record.seq
    }
    this.storeWriter = storeWriter
    this.writer = writer
  }

  /**
   * Checkpoint `seq` starts at byte `offset` of the log: in a log signed per batch (version 2) its place is
   * known once the writer signed the lines before it (appended, it was counted without their macs).
   */
  placed(seq: number, offset: number) {
    for (const mark of [this.written, this.releasable]) if (mark?.seq === seq) mark.offset = offset
  }

  /** The write-behind made every record up to `seq` durable. */
  durable(seq: number) {
    const mark = this.written
    if (!mark || seq < mark.seq) return
    this.written = undefined
    this.releasable = mark
  }

  /**
   * Lets go of the records before checkpoint `mark`: from then on the session holds that checkpoint and
   * what follows, as one opened from it would, and what it holds of the log starts at its byte.
   */
  private release(mark: CheckpointMark) {
    this.releasable = undefined
    const drop = mark.seq - this.firstSeq
    if (drop <= 0 || this.list[drop]?.seq !== mark.seq) return
    this.head ??= headerOf(this.list)
    this.list.splice(0, drop)
    this.firstSeq = mark.seq
    this.base = mark.offset
  }

  /** Ends the background check of the head, if one runs, and waits until it has let go of the log. */
  async stopHeadCheck() {
    const check = this.headCheck
    if (!check) return
    this.headCheck = undefined
    check.stop.abort()
    await check.done
  }

  beginClose() {
    this.state = 'closing'
  }

  abortClose() {
    if (this.state === 'closing') this.state = 'open'
  }

  markClosed() {
    this.state = 'closed'
  }
}

export const mebibytes = (bytes: number) => `${Math.round((bytes / 2 ** 20) * 10) / 10} MiB`
