import { type FileHandle, open, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { CompactedIndex, SummaryIndexStore } from '@goalkeeper/session'
import { tempFor } from './files.ts'
import { WriterLock } from './lock.ts'

/** Appends that keep racing compactions are given up after this many tries (the next listing rebuilds). */
const APPEND_TRIES = 5

/**
 * One directory's index of kept summaries, beside its logs: `.summaries` (the compacted part, replaced
 * whole through a temp file and a rename), `.summaries.log` (the journal writers append to),
 * `.summaries.log.taken` (a journal a compaction is folding in) and `.summaries.lock` (held while
 * compacting). None is fsync'd: a lost or cut index is rebuilt from the logs.
 */
export class FileSummaryIndex implements SummaryIndexStore {
  readonly location: string
  private journal: string
  private taken: string

  /** `checkDir` refuses a directory that is a link (or not one) before anything is written in it. */
  constructor(readonly dir: string, private checkDir: (dir: string) => Promise<void>) {
    this.location = path.join(dir, '.summaries')
    this.journal = `${this.location}.log`
    this.taken = `${this.journal}.taken`
  }

  async read(): Promise<{ journal: Buffer; compacted?: CompactedIndex }> {
    // Journal, then what a compaction took, then the compacted part: an entry moves only forward along
    // that path (journal, taken, compacted), so reading backwards to it finds it in one of them.
    const journal = await readIfThere(this.journal)
    const taken = await readIfThere(this.taken)
    return { journal: Buffer.concat([taken, journal]), compacted: await openCompacted(this.location) }
  }

  async append(lines: string): Promise<void> {
    await this.checkDir(this.dir)
    for (let attempt = 1; attempt <= APPEND_TRIES; attempt++) {
      const handle = await open(this.journal, 'a', 0o600)
      try {
        await handle.write(lines)
        // Still the journal: the lines are read from it or from the taken one a compaction renamed it to,
        // before the compaction removes that one. Renamed before the write landed: written again.
        const [mine, now] = await Promise.all([handle.stat(), stat(this.journal).catch(() => undefined)])
        if (now && now.ino === mine.ino && now.dev === mine.dev) return
      } finally {
        await handle.close()
      }
    }
  }

  async compact(build: (journal: Buffer, compacted?: CompactedIndex) => Promise<Buffer>): Promise<boolean> {
    await this.checkDir(this.dir)
    let lock: WriterLock
    try {
      lock = await WriterLock.acquire(this.location, 'summary index')
    } catch (error) {
      if ((error as { code?: string }).code === 'SESSION_LOCKED') return false
      throw error
    }
    try {
      // A journal taken by a compaction that was killed is folded in first; the current one waits for the next.
      const leftover = await readIfThere(this.taken)
      if (!leftover.length) await rename(this.journal, this.taken).catch(ignoreMissing)
      const journal = leftover.length ? leftover : await readIfThere(this.taken)
      const compacted = await openCompacted(this.location)
      let content: Buffer
      try {
        content = await build(journal, compacted)
      } finally {
        await compacted?.close()
      }
      await replace(this.location, content)
      await unlink(this.taken).catch(ignoreMissing)
      return true
    } finally {
      await lock.release()
    }
  }
}

async function readIfThere(file: string): Promise<Buffer> {
  return readFile(file).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return Buffer.alloc(0)
    throw error
  })
}

function ignoreMissing(error: NodeJS.ErrnoException) {
  if (error.code !== 'ENOENT') throw error
}

async function openCompacted(file: string): Promise<CompactedIndex | undefined> {
  let handle: FileHandle
  try {
    handle = await open(file, 'r')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  const { size } = await handle.stat()
  return {
    size,
    read: async (start, length) => {
      const buffer = Buffer.alloc(length)
      const { bytesRead } = await handle.read(buffer, 0, length, start)
      return buffer.subarray(0, bytesRead)
    },
    close: () => handle.close(),
  }
}

/** Replaced whole through a temp file and a rename, never fsync'd: a lost index is only rebuilt. */
async function replace(file: string, content: Buffer): Promise<void> {
  const temp = tempFor(file)
  try {
    await writeFile(temp, content, { flag: 'wx', mode: 0o600 })
    await rename(temp, file)
  } catch (error) {
    await unlink(temp).catch(() => {})
    throw error
  }
}
