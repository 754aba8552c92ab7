import type { FileHandle } from 'node:fs/promises'

const noop = () => {}

/** A log's writer as the cache sees it: its handle, while it has one, and its seal's, once written. */
export interface LogSlot {
  handle?: FileHandle
  /** Closed with `handle`: a slot costs at most two descriptors. */
  seal?: FileHandle
}

/**
 * The logs this process holds open between write cycles: at most `max`, least recently used closed
 * first. A busy session keeps its descriptor (no open and close per batch); an idle one loses it to the
 * next session that writes, so thousands of open sessions need no more than `2 * max` descriptors (a log
 * and its seal). When
 * every slot is in a write at once, the next write waits for one.
 */
export class OpenLogs {
  /** Slots holding a handle and not in a write, least recently used first. */
  private idle = new Set<LogSlot>()
  private count = 0
  private waiting: (() => void)[] = []

  constructor(private max: number) {}

  /** Runs `task` with the slot's handle, opened with `open` if the slot has none; a failed task drops it. */
  async use<T>(slot: LogSlot, open: () => Promise<FileHandle>, task: (handle: FileHandle, fresh: boolean) => Promise<T>): Promise<T> {
    const fresh = !slot.handle
    if (slot.handle) this.idle.delete(slot)
    else {
      await this.reserve()
      try {
        slot.handle = await open()
      } catch (error) {
        this.count--
        this.wake()
        throw error
      }
    }
    try {
      const result = await task(slot.handle, fresh)
      this.idle.add(slot)
      this.wake()
      return result
    } catch (error) {
      // After a failure the handle is not trusted again: the next write reopens and checks the file.
      await this.drop(slot)
      throw error
    }
  }

  /** Closes the slot's handle, if any (its writer closes, or its file is not to be trusted). */
  async drop(slot: LogSlot): Promise<void> {
    const handle = slot.handle
    if (!handle) return
    slot.handle = undefined
    this.idle.delete(slot)
    this.count--
    await Promise.all([handle.close().catch(noop), closeSeal(slot)])
    this.wake()
  }

  private async reserve(): Promise<void> {
    for (;;) {
      if (this.count < this.max) {
        this.count++
        return
      }
      const [oldest] = this.idle
      if (oldest) {
        // Its place passes to the caller: the count stays.
        this.idle.delete(oldest)
        const handle = oldest.handle!
        oldest.handle = undefined
        await Promise.all([handle.close().catch(noop), closeSeal(oldest)])
        return
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve))
    }
  }

  private wake() {
    this.waiting.shift()?.()
  }
}

async function closeSeal(slot: LogSlot): Promise<void> {
  const seal = slot.seal
  slot.seal = undefined
  await seal?.close().catch(noop)
}
