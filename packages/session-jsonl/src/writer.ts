import { constants } from 'node:fs'
import { type FileHandle, open, stat } from 'node:fs/promises'
import { writeAll } from './files.ts'
import { type LogSlot, OpenLogs } from './open-logs.ts'
import { type AppenderOptions, WriteBehind } from '@goalkeeper/session'

/** Which file a writer owns: the one it locked and read, told apart from whatever stands at its path later. */
export interface FileIdentity {
  dev: number
  ino: number
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

  constructor(readonly file: string, private identity: FileIdentity, private size: number, lastSeq: number, options: AppenderOptions, private sealFile?: string) {
    super(lastSeq, options)
    this.durableSize = size
    this.queuedSeq = this.writtenSeq = lastSeq
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
    await openLogs.use(this.slot, () => this.open(), (handle) => this.cycleWith(handle, sync))
  }

  private async open(): Promise<FileHandle> {
    try {
      // No O_CREAT: a log removed meanwhile must not come back empty; no following a link planted there.
      return await open(this.file, constants.O_RDWR | constants.O_NOFOLLOW)
    } catch (error) {
      throw this.openFailed(error as NodeJS.ErrnoException)
    }
  }

  private async cycleWith(handle: FileHandle, sync: boolean): Promise<void> {
    if (!sync && !this.queue.length && !this.retry) return
    const own = await handle.stat()
    // A handle (re)opened by path must lead to the file this writer locked and read.
    if (own.ino !== this.identity.ino || own.dev !== this.identity.dev) throw this.lose('replaced', `${this.file} was replaced by another file or directory`)
    await this.writeQueued(handle, own.size)
    if (!sync) return
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

  private async writeQueued(handle: FileHandle, fileSize: number): Promise<void> {
    // Both taken before the write's await: a line pushed during it is the next chunk's, and a seal naming
    // this chunk's last seq must carry this chunk's last line.
    const lastSeq = this.queuedSeq
    if (!this.queue.length && !this.retry) return
    // Writing past a file someone truncated would leave a hole of NUL bytes mid-log.
    if (fileSize < this.size) throw this.truncated(fileSize)
    const chunk = this.take()
    // After the take, which signs a batched log's lines: the line that carries the mac the chain is at.
    const lastLine = this.lastQueuedLine
    if (!chunk) return
    try {
      await writeAll(handle, chunk, this.size)
    } catch (error) {
      this.retry = this.retry ? Buffer.concat([chunk, this.retry]) : chunk
      throw error
    }
    this.size += chunk.length
    this.unsynced.push(chunk)
    this.writtenSeq = lastSeq
    // The chunk ends with the last line queued when it was taken: the queue holds every line pushed, after any retry.
    this.writtenLine = lastLine
  }

  private take(): Buffer | undefined {
    const parts: Buffer[] = []
    if (this.retry) parts.push(this.retry)
    if (this.queue.length) {
      const batches = this.options.batches
      // Signed as they are taken: a retry writes the same bytes, and later lines chain after them.
      const lines = batches ? batches.sign(this.queue, this.queuedSeq - this.queue.length + 1, this.size + (this.retry?.length ?? 0)) : this.queue
      if (batches) this.lastQueuedLine = batches.lastHead
      parts.push(Buffer.from(lines.join('')))
    }
    this.retry = undefined
    this.queue = []
    this.queuedChars = 0
    if (parts.length < 2) return parts[0]
    return Buffer.concat(parts)
  }

  /** After a failed fsync the written-but-unsynced bytes cannot be trusted: write them again next time. */
  private rewind() {
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
    if (current.size < this.size) throw this.truncated(current.size)
  }

  private truncated(size: number) {
    return this.lose('truncated', `${this.file} was cut short by someone else (${size} bytes where ${this.size} were written)`)
  }

  private lose(reason: 'removed' | 'replaced' | 'truncated', message: string, cause?: unknown): Error {
    this.lost = Object.assign(new Error(`${message} while the session was open; it is no longer written`, { cause }), { code: 'SESSION_LOST', reason })
    return this.lost
  }
}
