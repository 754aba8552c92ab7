import { checkRecord } from './codec.ts'
import { ChainCheck, type CheckpointEntry, type SealCheck, type Signer, splitMac } from './integrity.ts'
import type { SessionRecord } from './records.ts'
import { SessionError } from './types.ts'

const NEWLINE = 0x0a
const HAS_NEWLINE = /\n/

/**
 * What a store hands a reader: bytes of the log, or complete lines without their newlines (a store that
 * keeps lines, as a database does, then needs not encode them for the reader to decode and split again).
 */
export type LogChunk = Buffer | readonly string[]

/** What is left after the last complete, valid line: nothing, or a torn tail. */
export interface LogEnd {
  /** Length in bytes of the complete, valid lines; anything after it is a torn tail. */
  goodBytes: number
  /** The torn tail (bytes after the last newline, or an unparsable last line with its newline), if any. */
  torn?: Buffer
}

/** Where reading starts when it starts at a checkpoint (its index entry), and what the header said. */
export interface ReadStart extends CheckpointEntry {
  sealedHeader: boolean
  /** The header says one mac per batch (version 2). */
  batched?: boolean
}

/**
 * Reads a session log chunk by chunk with the replay rules, handing each valid record to `onRecord`
 * and checking the mac chain on the way; holds no more than one chunk and one line. The complete
 * lines of a chunk are decoded in one go (one string per chunk, not per line); a line cut by a
 * chunk boundary is joined from its two parts. An unparsable line is only torn if nothing follows
 * it, so it is kept aside until the next line shows up; any other bad line throws at once.
 */
export class LogReader {
  readonly chain: ChainCheck
  /** Records read so far (the seq expected next). */
  count = 0
  private bytes = 0
  /** The bytes after the last newline seen, in the chunks they came in (joined once, when their line ends). */
  private carry: Buffer[] = []
  private carryBytes = 0
  private unparsable?: { line: number; offset: number; bytes: Buffer }
  /** Set at a seq break in a signed log: what follows is not read (records must stay contiguous). */
  private broken = false
  private sealedHeader = false
  /** The seq after the header, when it is not 1: a fork that starts at its parent's checkpoint (`parent.from`). */
  private from?: number
  /** The last checkpoint line read: where it starts and the mac before it (what the checkpoint index keeps). */
  lastCheckpoint?: CheckpointEntry
  /**
   * In a batched log, the records of the batch being read, with their lines and where its first line
   * is: handed on once the whole batch is read (verified or not), or left as a torn tail at the end.
   */
  private held: SessionRecord[] = []
  private heldLines: string[] = []
  private heldAt?: () => { offset: number; bytes: Buffer }

  constructor(private file: string, private id: string, signer: Signer | undefined, private onRecord: (record: SessionRecord) => void, seal?: SealCheck, start?: ReadStart) {
    this.chain = new ChainCheck(file, id, signer, seal)
    if (!start) return
    this.count = start.seq
    this.bytes = start.offset
    this.sealedHeader = start.sealedHeader
    this.chain.resumeAt(start.seq, start.mac, start.prefix)
    this.chain.batched = start.batched === true
    if (start.sealedHeader) this.chain.requireSigned('its header says every line is')
  }

  /** Records of the batch being read, held until it is whole (version 2). */
  get holding(): number {
    return this.held.length
  }

  push(chunk: Buffer) {
    let start = 0
    const first = chunk.indexOf(NEWLINE)
    if (first < 0) {
      if (chunk.length) this.keep(chunk)
      this.bytes += chunk.length
      return
    }
    if (this.carryBytes) {
      const line = Buffer.concat([...this.carry, chunk.subarray(0, first)])
      const offset = this.bytes - this.carryBytes
      this.carry = []
      this.carryBytes = 0
      this.take(line.toString('utf8'), () => ({ offset, bytes: Buffer.concat([line, Buffer.from('\n')]) }))
      start = first + 1
    }
    const last = chunk.lastIndexOf(NEWLINE)
    if (last >= start) {
      const text = chunk.toString('utf8', start, last + 1)
      // Taken now: a batch's first line may be located after later chunks were counted.
      const chunkOffset = this.bytes
      let index = 0
      for (let at = 0, end = text.indexOf('\n'); end >= 0; at = end + 1, end = text.indexOf('\n', at), index++) {
        const lineIndex = index
        // Offsets are byte positions, found again from the newlines only for the rare unparsable line.
        this.take(text.slice(at, end), () => lineAt(chunk, start, lineIndex, chunkOffset))
      }
    }
    if (last + 1 < chunk.length) this.keep(chunk.subarray(last + 1))
    this.bytes += chunk.length
  }

  /**
   * Complete lines without their newlines: read as `push` reads their bytes with a newline after each,
   * with the same offsets, torn tail and errors.
   */
  pushLines(lines: readonly string[]) {
    let index = 0
    // After bytes that ended inside a line (a range cut mid-line), all go as bytes: the first completes it.
    if (!this.carryBytes) for (; index < lines.length; index++) {
      const line = lines[index]
      // A newline inside a row (an edit by hand) splits it, as it does in a file.
      if (HAS_NEWLINE.test(line)) break
      const offset = this.bytes
      this.bytes += Buffer.byteLength(line) + 1
      this.take(line, () => ({ offset, bytes: Buffer.from(`${line}\n`) }))
    }
    if (index < lines.length) this.push(Buffer.from(`${lines.slice(index).join('\n')}\n`))
  }

  private keep(part: Buffer) {
    this.carry.push(part)
    this.carryBytes += part.length
  }

  /** The end of the log: where its valid lines stop and what torn tail follows. Throws for a log without a header. */
  finish(): LogEnd {
    const { unparsable } = this
    const carry = this.carryBytes ? Buffer.concat(this.carry) : undefined
    // Only the last line may be torn: an unparsable complete line followed by a partial one is corrupt.
    if (unparsable && carry) throw corrupt(this.file, unparsable.line, 'is not valid JSON')
    if (this.count === 0) throw new SessionError('SESSION_CORRUPT', `${this.file}:1: no complete session header (the file is empty or its only line is torn)`, this.file, 1)
    const torn = this.heldAt && this.chain.open
    this.chain.finish(this.sealedHeader)
    if (this.broken) return { goodBytes: this.bytes }
    if (torn) {
      // A batch cut short by a crash mid-write: torn from its first line on, like a torn line.
      const tail: Buffer[] = [Buffer.from(`${this.heldLines.join('\n')}\n`)]
      if (unparsable) tail.push(unparsable.bytes)
      if (carry) tail.push(carry)
      return { goodBytes: this.heldAt!().offset, torn: Buffer.concat(tail) }
    }
    if (unparsable) return { goodBytes: unparsable.offset, torn: unparsable.bytes }
    if (carry) return { goodBytes: this.bytes - carry.length, torn: carry }
    return { goodBytes: this.bytes }
  }

  private take(text: string, locate: () => { offset: number; bytes: Buffer }) {
    if (this.broken) return
    if (this.unparsable) throw corrupt(this.file, this.unparsable.line, 'is not valid JSON')
    // The body (the line without its mac) is what is parsed: a record never holds a mac to delete.
    const { body, mac } = splitMac(text)
    let value: any
    try {
      value = JSON.parse(body)
    } catch {
      // A crash can leave the final line complete in length but garbage (e.g. zero-filled blocks).
      this.unparsable = { line: this.count + 1, ...locate() }
      return
    }
    if (this.count === 1 && this.from !== undefined) {
      // A fork that starts at a checkpoint: the header is followed by it, with the parent's seqs.
      this.count = this.from
      this.chain.jumpTo(this.from)
      if (value?.type !== 'session/checkpoint') throw new SessionError('SESSION_CORRUPT', `${this.file}:2: line is not the checkpoint its header says the fork starts at (seq ${this.from})`, this.file, 2)
    }
    const problem = checkRecord(value, this.count, this.id)
    if (problem) {
      // In a signed log, lines out of order (removed, reordered, inserted, rows swapped) are tampering.
      if (problem.code === 'SESSION_BAD_SEQ' && this.chain.headerSigned) {
        this.chain.breakAt(this.count + 1, `${problem.reason}: lines were removed, reordered or inserted`)
        this.broken = true
        this.release()
        return
      }
      throw new SessionError(problem.code, `${this.file}:${this.count + 1}: line ${problem.reason}`, this.file, this.count + 1)
    }
    if (this.count === 0 && typeof value.data.keyId === 'string') this.chain.headerKeyId = value.data.keyId
    if (this.count === 0 && value.data.sealed === true) {
      this.sealedHeader = true
      this.chain.requireSigned('its header says every line is')
    }
    if (this.count === 0 && value.data.version === 2) this.chain.batched = true
    if (this.count === 0 && value.data.parent?.from > 1) this.from = value.data.parent.from
    const batched = this.chain.batched
    const inBatch = batched && this.chain.open
    // The size a batch's first line gives, as signed: it counts for batched logs only, and no record keeps it.
    const size = batched && mac && !inBatch && Number.isSafeInteger(value.batch) && value.batch > 1 ? value.batch : 1
    if (value.type === 'session/checkpoint' && mac && !inBatch) {
      const before = this.chain.next()
      this.chain.check(text, body, mac, size)
      if (this.chain.integrity.state === 'signed') this.lastCheckpoint = { seq: this.count, offset: locate().offset, mac: before, prefix: this.chain.integrity.unsignedPrefix }
    } else this.chain.check(text, body, mac, size)
    // A mac that is not one (not 64 hex digits) stayed in the body: records never carry it.
    if (mac === undefined && 'mac' in value) delete value.mac
    if (batched && 'batch' in value) delete value.batch
    this.count++
    if (!batched) return this.onRecord(value as SessionRecord)
    if (!inBatch && !this.chain.open) {
      // A batch of one, or a line after trust ended: nothing to wait for.
      this.release()
      return this.onRecord(value as SessionRecord)
    }
    if (!inBatch) this.heldAt = locate
    this.held.push(value as SessionRecord)
    this.heldLines.push(text)
    if (!this.chain.open) this.release()
  }

  /** Hands on the records of the batch just read (and forgets where it started). */
  private release() {
    for (const record of this.held) this.onRecord(record)
    this.held = []
    this.heldLines = []
    this.heldAt = undefined
  }
}

/** Where line `index` (counted from `start`) of `chunk` begins in the log, and a copy of its bytes with the newline. */
function lineAt(chunk: Buffer, start: number, index: number, chunkOffset: number): { offset: number; bytes: Buffer } {
  let at = start
  for (let i = 0; i < index; i++) at = chunk.indexOf(NEWLINE, at) + 1
  return { offset: chunkOffset + at, bytes: Buffer.from(chunk.subarray(at, chunk.indexOf(NEWLINE, at) + 1)) }
}

function corrupt(file: string, line: number, reason: string) {
  return new SessionError('SESSION_CORRUPT', `${file}:${line}: line ${reason}`, file, line)
}
