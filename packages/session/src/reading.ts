import type { SealCheck, Signer } from './integrity.ts'
import { type LogEnd, LogReader, type ReadStart } from './log-reader.ts'
import { isRecordOf, type SessionHeaderData, type SessionRecord } from './records.ts'
import type { SessionStore } from './store.ts'
import type { Integrity, SessionReading } from './types.ts'

/** Where a reading from a checkpoint starts: the byte, the chain state there and the header read apart. */
export interface ReadingStart {
  offset: number
  read: ReadStart
  header: SessionHeaderData
  /** Called when the log where the index points does not start with its checkpoint: the reading starts over from the header. */
  ignored(why: string): void
}

/**
 * `SessionService.read`: a log read chunk by chunk with the replay rules (`LogReader`), each chunk's records
 * handed on once the reader let go of them (verified, or past the first bad line), then dropped.
 */
export class LogReading implements SessionReading {
  header?: SessionHeaderData
  peakHeld = 0
  /** The end of the last iteration that ran to the end: where the valid lines stop, and a torn tail. */
  end?: LogEnd
  private reader?: LogReader

  constructor(private store: SessionStore, readonly id: string, readonly file: string, private signer: Signer, private seal: SealCheck, readonly size: number, private start?: ReadingStart) {
    this.header = start?.header
  }

  get integrity(): Integrity {
    return this.reader?.chain.integrity ?? { state: 'unsigned' }
  }

  [Symbol.asyncIterator](): AsyncIterator<SessionRecord> {
    return this.records()
  }

  private async *records(): AsyncGenerator<SessionRecord> {
    const start = this.start
    const pending: SessionRecord[] = []
    const reader = new LogReader(this.file, this.id, this.signer, (record) => pending.push(record), this.seal, start?.read)
    this.reader = reader
    this.end = undefined
    let first = true
    for await (const chunk of this.store.stream(this.id, { start: start?.offset ?? 0, end: this.size })) {
      reader.push(chunk)
      const held = pending.length + reader.holding
      if (held > this.peakHeld) this.peakHeld = held
      if (first && pending.length) {
        first = false
        const head = pending[0]
        if (start && (!isRecordOf(head, 'session/checkpoint') || head.seq !== start.read.seq)) {
          // Nothing was handed on yet: the whole log is read instead, which says what is wrong.
          start.ignored(`no checkpoint at seq ${start.read.seq} where it points`)
          this.start = undefined
          this.header = undefined
          yield* this.records()
          return
        }
        if (!start && isRecordOf(head, 'session/header')) this.header = head.data
      }
      for (const record of pending) yield record
      pending.length = 0
    }
    this.end = reader.finish()
  }
}
