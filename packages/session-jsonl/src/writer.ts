import { constants } from 'node:fs'
import { type FileHandle, open, stat } from 'node:fs/promises'
import { writeAll } from './files.ts'
import { type LogSlot, OpenLogs } from './open-logs.ts'
import { rollOver } from './segments.ts'
import { type AppenderOptions, type SegmentEntry, WriteBehind } from '@goalkeeper/session'

/** Which file a writer owns: the one it locked and read, told apart from whatever stands at its path later. */
export interface FileIdentity {
  dev: number
  ino: number
}

/** How a writer splits its log into segments (`segments.ts`). */
export interface Segmenting {
  /** A checkpoint batch starts a new segment once the live one holds at least this many bytes. */
  bytes: number
  /** Where the live file starts in the log: the closed segments' length. */
  liveStart: number
  /** The closed segments, as their index names them. */
  entries: SegmentEntry[]
}

/** Logs held open between write cycles, per process: busy sessions keep theirs, idle ones give theirs up. */
const openLogs = new OpenLogs(64)

/**
 * Write-behind appender for one JSONL file.
 *
 * Layout of the file it owns: bytes [0, durableSize) are fsync'd and verified; [durableSize, size) are
 * written but not yet fsync'd (kept in `unsynced`); then come `retry` and `queue`, not yet written.
 * Writes are positional at `size`, so rewriting after a failure overwrites the same bytes instead of
 * duplicating them. Only one cycle (write, or write + fsync + verify) runs at a time.
 */
export class JsonlWriter extends WriteBehind {
  private queue: string[] = []
  private retry?: Buffer
  /** The seq and line `retry` ends with. */
  private retryEnd?: { seq: number; line?: string }
  private unsynced: Buffer[] = []
  private durableSize: number
  /** Seq of the last line queued for writing (behind appendedSeq once the log is sealed). */
  private queuedSeq: number
  private writtenSeq: number
  /**
   * Set once the file at the path is no longer this writer's (removed, its directory removed, or
   * replaced): someone else touched the log, so nothing more is written and every flush rejects.
   */
  private lost?: Error
  /** This log's handle while the process keeps it open (`OpenLogs`). */
  private slot: LogSlot = {}
  /** The last line queued, the last written and the last durable (without newline), for the seal. */
  private lastQueuedLine?: string
  private writtenLine?: string
  private durableLine?: string

  /** Seqs of queued lines that start a batch of their own (checkpoints): where a new segment may begin. */
  private heads = new Set<number>()
  private liveStart: number

  /**
   * `size` is the log's (every segment's) length; `segmenting`: split it into segments at checkpoints,
   * else it stays one file however long it grows.
   */
  constructor(readonly file: string, private identity: FileIdentity, private size: number, lastSeq: number, options: AppenderOptions, private sealFile?: string, private segmenting?: Segmenting) {
    super(lastSeq, options)
    this.durableSize = size
    this.queuedSeq = this.writtenSeq = lastSeq
    this.liveStart = segmenting?.liveStart ?? 0
  }

  override push(line: string, seq: number, head?: boolean): void {
    // Only a log signed per batch marks heads: a checkpoint's batch is one no earlier batch runs into.
    if (head && this.segmenting && !this.sealed && this.options.segmentIndex) this.heads.add(seq)
    super.push(line, seq, head)
  }

  get lostError(): Error | undefined {
    return this.lost
  }

  /** Stops background writes and gives up the handle; lines not yet flushed are dropped. */
  override async close(): Promise<void> {
    await super.close()
    await openLogs.drop(this.slot)
  }

  protected enqueue(line: string, seq: number): void {
    this.queue.push(line)
    this.queuedSeq = seq
    this.lastQueuedLine = line
  }

  protected hasQueued(): boolean {
    return this.queue.length > 0 || !!this.retry
  }

  /**
   * A sync cycle runs even with nothing queued, so that a file removed after its last write is noticed
   * at a flush; a burst of flushes shares one cycle, so it costs one fsync.
   */
  protected async runCycle(sync: boolean): Promise<void> {
    if (this.lost) throw this.lost
    if (!sync && !this.queue.length && !this.retry) return
    // A cycle that reaches a checkpoint due to start a new segment stops there, everything before it
    // durable; the live file is closed as a segment and the cycle goes on in the new one.
    while (await openLogs.use(this.slot, () => this.open(), (handle) => this.cycleWith(handle, sync))) {
      await openLogs.drop(this.slot)
      await this.rollOver()
    }
  }

  /** Whether the next queued line starts a checkpoint batch that is due to begin a new segment. */
  private rollDue(): boolean {
    if (!this.segmenting || this.retry || !this.queue.length) return false
    return this.heads.has(this.queuedSeq - this.queue.length + 1) && this.size - this.liveStart >= this.segmenting.bytes
  }

  /** The live file (all of it durable) becomes the next closed segment, and an empty one the live file. */
  private async rollOver() {
    const segmenting = this.segmenting!
    // Everything taken is written and durable, and nothing queued is signed yet: the signer's last mac is
    // the one the live file ends with (also right after an open, before this writer wrote anything).
    const last = segmenting.entries.at(-1)
    const entry: SegmentEntry = { n: (last?.n ?? 0) + 1, start: this.liveStart, length: this.size - this.liveStart, lastSeq: this.durableSeq, mac: this.options.batches!.last }
    const entries = [...segmenting.entries, entry]
    // A failure leaves the live file in place (or linked, which the next attempt or open takes as it is).
    this.identity = await rollOver(this.file, entry, this.options.segmentIndex!(entries), this.identity)
    segmenting.entries = entries
    this.liveStart = this.size
  }

  private async open(): Promise<FileHandle> {
    try {
      // No O_CREAT: a log removed meanwhile must not come back empty; no following a link planted there.
      return await open(this.file, constants.O_RDWR | constants.O_NOFOLLOW)
    } catch (error) {
      throw this.openFailed(error as NodeJS.ErrnoException)
    }
  }

  /** One write cycle in the live file; true when it stopped, all durable, at a checkpoint due to start a new segment. */
  private async cycleWith(handle: FileHandle, sync: boolean): Promise<boolean> {
    if (!sync && !this.queue.length && !this.retry) return false
    const own = await handle.stat()
    // A handle (re)opened by path must lead to the file this writer locked and read.
    if (own.ino !== this.identity.ino || own.dev !== this.identity.dev) throw this.lose('replaced', `${this.file} was replaced by another file or directory`)
    await this.writeQueued(handle, own.size)
    const roll = this.rollDue()
    if (!sync && !roll) return false
    // The path check runs beside the fsync, not after it: a removal during the fsync is caught either way,
    // and one after the check is missed either way; on a busy machine each wait for the pool costs.
    const [synced, verified] = await Promise.allSettled([handle.sync(), this.verify()])
    if (synced.status === 'rejected' || verified.status === 'rejected') {
      this.rewind()
      throw synced.status === 'rejected' ? synced.reason : (verified as PromiseRejectedResult).reason
    }
    this.durableSize = this.size
    this.unsynced = []
    const sealed = this.durableLine !== this.writtenLine
    this.durableLine = this.writtenLine
    if (sealed) await this.writeSeal(this.writtenSeq, this.durableLine!)
    this.durable(this.writtenSeq)
    return roll
  }

  /**
   * Overwrites the seal in place (fixed width, one write) once the lines it names are durable, without
   * an fsync of its own: after a crash the seal may be behind the log, never ahead of it, and behind
   * only means a shorter cut would go unseen. A seal that cannot be written leaves the old one, which
   * is behind too. Its handle stays open beside the log's (a flush then costs one write, not an open,
   * a write and a close), and is given up with it.
   */
  private async writeSeal(seq: number, line: string) {
    const text = this.sealFile && this.options.seal?.(seq, line.endsWith('\n') ? line.slice(0, -1) : line)
    if (!text) return
    try {
      this.slot.seal ??= await open(this.sealFile!, constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW, 0o600)
      await writeAll(this.slot.seal, Buffer.from(text), 0)
    } catch {
      // Best effort: the log is durable, and the seal it leaves is behind it. The handle is not trusted again.
      await this.slot.seal?.close().catch(() => {})
      this.slot.seal = undefined
    }
  }

  private openFailed(error: NodeJS.ErrnoException): Error {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return this.lose('removed', `${this.file} was removed (the file or its directory)`, error)
    if (error.code === 'ELOOP' || error.code === 'EISDIR') return this.lose('replaced', `${this.file} was replaced by another file or directory`, error)
    return error
  }

  /** Writes what is queued, chunk by chunk (a chunk stops before a checkpoint), until a new segment is due. */
  private async writeQueued(handle: FileHandle, fileSize: number): Promise<void> {
    // Writing past a file someone truncated would leave a hole of NUL bytes mid-log.
    if ((this.queue.length || this.retry) && this.liveStart + fileSize < this.size) throw this.truncated(this.liveStart + fileSize)
    while ((this.queue.length || this.retry) && !this.rollDue()) {
      // Taken together before the write's await: a line pushed during it is the next chunk's, and a seal
      // naming this chunk's last seq must carry this chunk's last line.
      const { chunk, end } = this.take()
      try {
        await writeAll(handle, chunk, this.size - this.liveStart)
      } catch (error) {
        this.retry = this.retry ? Buffer.concat([chunk, this.retry]) : chunk
        this.retryEnd = end
        throw error
      }
      this.size += chunk.length
      this.unsynced.push(chunk)
      this.writtenSeq = end.seq
      this.writtenLine = end.line
    }
  }

  /**
   * What is to be written next: bytes of a failed write, then the queue up to the next checkpoint, signed
   * (a batched log). `end`: the seq and line (carrying the mac the chain is at) the chunk ends with.
   */
  private take(): { chunk: Buffer; end: { seq: number; line?: string } } {
    const parts: Buffer[] = []
    let end = this.retryEnd ?? { seq: this.queuedSeq, line: this.lastQueuedLine }
    if (this.retry) parts.push(this.retry)
    let rest: string[] = []
    if (this.queue.length) {
      const firstSeq = this.queuedSeq - this.queue.length + 1
      // Taken up to the next checkpoint only, where the write stops to see whether a new segment starts.
      const cut = this.nextHead(firstSeq)
      if (cut < this.queue.length) {
        rest = this.queue.slice(cut)
        this.queue = this.queue.slice(0, cut)
      }
      this.heads.delete(firstSeq)
      const batches = this.options.batches
      // Signed as they are taken: a retry writes the same bytes, and later lines chain after them.
      const lines = batches ? batches.sign(this.queue, firstSeq, this.size + (this.retry?.length ?? 0)) : this.queue
      end = { seq: firstSeq + this.queue.length - 1, line: batches ? batches.lastHead : this.queue.at(-1) }
      // The line the chain is at: a batched log's last batch head, else the last line.
      if (!rest.length) this.lastQueuedLine = end.line
      parts.push(Buffer.from(lines.join('')))
    }
    this.retry = undefined
    this.retryEnd = undefined
    this.queue = rest
    this.queuedChars = 0
    for (const line of rest) this.queuedChars += line.length
    return { chunk: parts.length < 2 ? parts[0] : Buffer.concat(parts), end }
  }

  /** Index in the queue (from seq `firstSeq`) of the first checkpoint after its first line; its length when none. */
  private nextHead(firstSeq: number): number {
    if (!this.heads.size) return this.queue.length
    for (let i = 1; i < this.queue.length; i++) if (this.heads.has(firstSeq + i)) return i
    return this.queue.length
  }

  /** After a failed fsync the written-but-unsynced bytes cannot be trusted: write them again next time. */
  private rewind() {
    if (!this.retry && this.unsynced.length) this.retryEnd = { seq: this.writtenSeq, line: this.writtenLine }
    if (this.unsynced.length) this.retry = Buffer.concat(this.retry ? [...this.unsynced, this.retry] : this.unsynced)
    this.unsynced = []
    this.size = this.durableSize
    this.writtenSeq = this.durableSeq
    this.writtenLine = this.durableLine
  }

  /** A write through an unlinked file "succeeds", so durability also needs the path to still lead to it. */
  private async verify(): Promise<void> {
    const current = await stat(this.file).catch((error: NodeJS.ErrnoException) => error)
    if (current instanceof Error) {
      if (current.code !== 'ENOENT' && current.code !== 'ENOTDIR') throw current
      throw this.lose('removed', `${this.file} was removed (the file or its directory)`, current)
    }
    // The handle's file is this writer's (checked at every cycle), so the path must lead to that same file.
    if (current.ino !== this.identity.ino || current.dev !== this.identity.dev) throw this.lose('replaced', `${this.file} was replaced by another file or directory`)
    if (this.liveStart + current.size < this.size) throw this.truncated(this.liveStart + current.size)
  }

  private truncated(size: number) {
    return this.lose('truncated', `${this.file} was cut short by someone else (${size} bytes where ${this.size} were written)`)
  }

  private lose(reason: 'removed' | 'replaced' | 'truncated', message: string, cause?: unknown): Error {
    this.lost = Object.assign(new Error(`${message} while the session was open; it is no longer written`, { cause }), { code: 'SESSION_LOST', reason })
    return this.lost
  }
}
