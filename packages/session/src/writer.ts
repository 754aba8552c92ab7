import { constants } from 'node:fs'
import { type FileHandle, open, stat } from 'node:fs/promises'
import { writeAll } from './files.ts'
import { type LogSlot, OpenLogs } from './open-logs.ts'
import type { Appender, AppenderOptions } from './store.ts'

const noop = () => {}

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
export class JsonlWriter implements Appender {
  private queue: string[] = []
  private queuedChars = 0
  private retry?: Buffer
  private unsynced: Buffer[] = []
  private durableSize: number
  private appendedSeq: number
  /** Seq of the last line queued for writing (behind appendedSeq once the log is sealed). */
  private queuedSeq: number
  private writtenSeq: number
  private syncedSeq: number
  /**
   * Set once the file at the path is no longer this writer's (removed, its directory removed, or
   * replaced): someone else touched the log, so nothing more is written and every flush rejects.
   */
  private lost?: Error
  /** Set once the log reached its size limit: later lines are not written, and flushes say why. */
  private sealed?: Error
  private cycle?: Promise<void>
  /** This log's handle while the process keeps it open (`OpenLogs`). */
  private slot: LogSlot = {}
  private nextSync?: Promise<void>
  private timer?: NodeJS.Timeout
  private stopped = false
  private failing = false

  constructor(readonly file: string, private identity: FileIdentity, private size: number, lastSeq: number, private options: AppenderOptions) {
    this.durableSize = size
    this.appendedSeq = this.queuedSeq = this.writtenSeq = this.syncedSeq = lastSeq
  }

  /** Number of records appended but not yet durable. */
  get pending(): number {
    return this.appendedSeq - this.syncedSeq
  }

  get durableSeq(): number {
    return this.syncedSeq
  }

  get lostError(): Error | undefined {
    return this.lost
  }

  /** From now on lines are counted but not written; what was pushed before is still written. */
  seal(error: Error): void {
    this.sealed ??= error
  }

  push(line: string, seq: number): void {
    if (this.sealed) {
      this.appendedSeq = seq
      return
    }
    this.queue.push(line)
    this.queuedChars += line.length
    this.appendedSeq = this.queuedSeq = seq
    if (this.cycle || this.nextSync) return
    if (this.queuedChars >= this.options.maxBatchBytes) this.startBackground()
    else this.timer ??= setTimeout(() => this.startBackground(), this.options.delayMs)
  }

  /**
   * Resolves once every line pushed before the call is durable. Concurrent callers share the next
   * sync cycle, so a burst of flushes costs one fsync. A sync cycle always runs, even with nothing
   * queued, so that a file removed after its last write is noticed (and recreated) here.
   */
  flush(): Promise<void> {
    this.nextSync ??= this.afterCurrentCycle().then(() => {
      this.nextSync = undefined
      return this.start(true)
    })
    return this.nextSync
  }

  /** Stops background writes and gives up the handle; lines not yet flushed are dropped. */
  async close(): Promise<void> {
    this.stopped = true
    this.clearTimer()
    await this.nextSync?.catch(noop)
    await this.cycle?.catch(noop)
    await openLogs.drop(this.slot)
  }

  private async afterCurrentCycle(): Promise<void> {
    this.clearTimer()
    if (this.cycle) await this.cycle.catch(noop)
  }

  private clearTimer() {
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
  }

  private startBackground() {
    this.timer = undefined
    if (this.cycle || this.nextSync || this.lost || this.stopped) return
    this.start(false).then(
      () => (this.failing = false),
      (error) => {
        // One report per streak of failures: a full disk would otherwise log on every retry.
        if (!this.failing) this.options.onBackgroundError(error)
        this.failing = true
      },
    )
  }

  private start(sync: boolean): Promise<void> {
    this.clearTimer()
    const cycle = this.runCycle(sync)
    this.cycle = cycle
    cycle.then(() => this.settle(true), () => this.settle(false))
    return cycle
  }

  private settle(ok: boolean) {
    this.cycle = undefined
    // After a failure, wait for the next append or flush instead of retrying in a loop.
    if (!ok || this.stopped || this.nextSync || this.timer || (!this.queue.length && !this.retry)) return
    if (this.queuedChars >= this.options.maxBatchBytes) this.startBackground()
    else this.timer = setTimeout(() => this.startBackground(), this.options.delayMs)
  }

  private async runCycle(sync: boolean): Promise<void> {
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
    if (this.writtenSeq > this.syncedSeq) {
      this.syncedSeq = this.writtenSeq
      this.options.onDurable(this.syncedSeq)
    }
    if (this.sealed && this.appendedSeq > this.syncedSeq) throw this.sealed
  }

  private openFailed(error: NodeJS.ErrnoException): Error {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return this.lose('removed', `${this.file} was removed (the file or its directory)`, error)
    if (error.code === 'ELOOP' || error.code === 'EISDIR') return this.lose('replaced', `${this.file} was replaced by another file or directory`, error)
    return error
  }

  private async writeQueued(handle: FileHandle, fileSize: number): Promise<void> {
    const lastSeq = this.queuedSeq
    if (!this.queue.length && !this.retry) return
    // Writing past a file someone truncated would leave a hole of NUL bytes mid-log.
    if (fileSize < this.size) throw this.truncated(fileSize)
    const chunk = this.take()
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
  }

  private take(): Buffer | undefined {
    const parts: Buffer[] = []
    if (this.retry) parts.push(this.retry)
    if (this.queue.length) parts.push(Buffer.from(this.queue.join('')))
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
    this.writtenSeq = this.syncedSeq
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
