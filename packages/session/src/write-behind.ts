import type { Appender, AppenderOptions } from './store.ts'

const noop = () => {}

/**
 * The scheduling shared by write-behind appenders, whatever they write to: lines wait in the store's own
 * queue until a background cycle (after `delayMs`, or at once past `maxBatchBytes`) or a flush writes
 * them. Only one cycle runs at a time; concurrent flushes share the next one; a streak of background
 * failures is reported once. A store supplies how lines are queued and how one cycle writes them.
 */
export abstract class WriteBehind implements Appender {
  /** Characters queued since the store last took its queue (the store resets it when it does). */
  protected queuedChars = 0
  protected appendedSeq: number
  /** Set once the log reached its size limit: later lines are not written, and flushes say why. */
  protected sealed?: Error
  private syncedSeq: number
  private cycle?: Promise<void>
  private nextSync?: Promise<void>
  private timer?: NodeJS.Timeout
  private stopped = false
  private failing = false
  /** The first failure of the current streak (background or flush), until a cycle succeeds. */
  private failure?: { error: unknown }

  constructor(lastSeq: number, protected options: AppenderOptions) {
    this.appendedSeq = this.syncedSeq = lastSeq
  }

  /** Set once the log is no longer this writer's: nothing more is written and every cycle rejects with it. */
  abstract get lostError(): Error | undefined
  /** Queues one line (sealed logs never get here). */
  protected abstract enqueue(line: string, seq: number): void
  /** Whether lines are queued or wait to be written again after a failure. */
  protected abstract hasQueued(): boolean
  /**
   * Writes what is queued; with `sync`, also makes it durable (and always runs, even with nothing queued).
   * Calls `durable` for what it made durable; on failure keeps the lines for the next cycle.
   */
  protected abstract runCycle(sync: boolean): Promise<void>

  /** Number of records appended but not yet durable. */
  get pending(): number {
    return this.appendedSeq - this.syncedSeq
  }

  get durableSeq(): number {
    return this.syncedSeq
  }

  /** From now on lines are counted but not written; what was pushed before is still written. */
  seal(error: Error): void {
    this.sealed ??= error
  }

  get signsBatches(): boolean {
    return this.options.batches !== undefined
  }

  push(line: string, seq: number, head?: boolean): void {
    this.appendedSeq = seq
    if (this.sealed) return
    if (head) this.options.batches?.markHead(seq)
    this.enqueue(line, seq)
    this.queuedChars += line.length
    if (this.cycle || this.nextSync) return
    if (this.queuedChars >= this.options.maxBatchBytes) this.startBackground()
    else this.timer ??= setTimeout(() => this.startBackground(), this.options.delayMs)
  }

  /** Resolves once every line pushed before the call is durable; concurrent callers share the next sync cycle. */
  flush(): Promise<void> {
    this.nextSync ??= this.afterCurrentCycle().then(() => {
      this.nextSync = undefined
      return this.start(true)
    })
    return this.nextSync
  }

  /** Stops background writes and waits for the cycle under way; lines not yet flushed are dropped. */
  async close(): Promise<void> {
    this.stopped = true
    this.clearTimer()
    await this.nextSync?.catch(noop)
    await this.cycle?.catch(noop)
  }

  /** Every line up to `seq` is durable; a sealed log then fails the flush that still has lines it will not write. */
  protected durable(seq: number): void {
    if (seq > this.syncedSeq) {
      this.syncedSeq = seq
      this.options.onDurable(seq)
    }
    if (this.sealed && this.appendedSeq > this.syncedSeq) throw this.sealed
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
    if (this.cycle || this.nextSync || this.lostError || this.stopped) return
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
    cycle.then(() => this.settle(true), (error) => {
      this.failure ??= { error }
      this.settle(false)
    })
    return cycle
  }

  private settle(ok: boolean) {
    this.cycle = undefined
    if (ok && this.failure) {
      // One line when a retry got through (a connection back, space freed): the failure did not lose anything.
      const { error } = this.failure
      this.failure = undefined
      this.options.onRecovered?.(error)
    }
    // After a failure, wait for the next append or flush instead of retrying in a loop.
    if (!ok || this.stopped || this.nextSync || this.timer || !this.hasQueued()) return
    if (this.queuedChars >= this.options.maxBatchBytes) this.startBackground()
    else this.timer = setTimeout(() => this.startBackground(), this.options.delayMs)
  }
}
