import { constants, createReadStream, existsSync } from 'node:fs'
import { type FileHandle, mkdir, open, readdir, unlink } from 'node:fs/promises'
import path from 'node:path'
import { createFileExclusive, fsyncDir, readAll, removeStaleTemps, saveSideFile } from './files.ts'
import { isSessionId } from './ids.ts'
import { WriterLock } from './lock.ts'
import type { Appender, AppenderOptions, SessionStore, StoreWriter } from './store.ts'
import { SessionError } from './types.ts'
import { JsonlWriter } from './writer.ts'
import { mebibytes } from './session.ts'

const EXT = '.jsonl'
// Never block on a FIFO or device someone put in the store, never follow a link planted there.
const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW

/**
 * Session logs as `<dir>/<id>.jsonl`, one writer per file through `<id>.jsonl.lock`. `olderDirs` are
 * where logs used to be kept: their logs are listed, read and written where they are; new ones go to `dir`.
 */
export class JsonlFileStore implements SessionStore {
  readonly location: string
  readonly olderDirs: readonly string[]

  private maxReadBytes: number

  constructor(dir: string, options: { olderDirs?: readonly string[]; maxReadBytes?: number } = {}) {
    this.maxReadBytes = options.maxReadBytes ?? Infinity
    this.location = path.resolve(dir)
    this.olderDirs = (options.olderDirs ?? []).map((d) => path.resolve(d)).filter((d) => d !== this.location)
  }

  /** Every directory this store reads, its own first. */
  get dirs(): string[] {
    return [this.location, ...this.olderDirs]
  }

  locationOf(id: string): string {
    const file = `${id}${EXT}`
    // A session is found where it is; one in no directory yet (being created) belongs to the store's own.
    for (const dir of this.olderDirs) {
      if (!existsSync(path.join(this.location, file)) && existsSync(path.join(dir, file))) return path.join(dir, file)
    }
    return path.join(this.location, file)
  }

  async create(id: string, content: Buffer): Promise<StoreWriter> {
    // An id taken in an older directory is taken.
    if (this.locationOf(id) !== path.join(this.location, `${id}${EXT}`)) throw new SessionError('SESSION_EXISTS', `session ${id} already exists: ${this.locationOf(id)}`, this.locationOf(id))
    const file = this.locationOf(id)
    await this.ensureDir()
    const lock = await WriterLock.acquire(file, id)
    try {
      await createFileExclusive(file, content).catch((error: NodeJS.ErrnoException) => {
        throw error.code === 'EEXIST' ? new SessionError('SESSION_EXISTS', `session ${id} already exists: ${file}`, file) : error
      })
      return new JsonlStoreWriter(file, await open(file, 'r+'), lock)
    } catch (error) {
      await lock.release()
      throw error
    }
  }

  async openForWrite(id: string): Promise<{ bytes: Buffer; writer: StoreWriter }> {
    const file = this.locationOf(id)
    // Not found is reported before the lock, whose file could not be created in a missing directory.
    await this.read(id, 0)
    const lock = await WriterLock.acquire(file, id)
    try {
      // What a process killed mid-write (of this log, its lock or a side file) left behind.
      await removeStaleTemps(file)
      const bytes = await this.read(id)
      return { bytes, writer: new JsonlStoreWriter(file, await open(file, 'r+'), lock) }
    } catch (error) {
      await lock.release()
      throw error
    }
  }

  async read(id: string, limit = Infinity): Promise<Buffer> {
    const handle = await this.openRegular(id)
    try {
      const { size } = await handle.stat()
      if (size > this.maxReadBytes && limit > 0) {
        // Refused before reading: replay holds the whole log, and past a few hundred MiB that fails deep in V8.
        throw new SessionError('SESSION_TOO_LARGE', `session ${id} is ${mebibytes(size)}, more than the ${mebibytes(this.maxReadBytes)} a session may have to be opened (maxOpenBytes of the session plugin): raise it on a machine with the memory, or start a new session`, this.locationOf(id))
      }
      return await readAll(handle, Math.min(size, limit))
    } finally {
      await handle.close()
    }
  }

  async *stream(id: string): AsyncIterable<Buffer> {
    const handle = await this.openRegular(id)
    // createReadStream closes the handle when the stream ends or is destroyed.
    yield* createReadStream('', { fd: handle }) as AsyncIterable<Buffer>
  }

  async list(): Promise<string[]> {
    const ids = new Set<string>()
    for (const dir of this.dirs) for (const id of await logsIn(dir)) ids.add(id)
    return [...ids]
  }

  async remove(id: string): Promise<void> {
    const file = this.locationOf(id)
    const lock = await WriterLock.acquire(file, id)
    try {
      await unlink(file)
      await fsyncDir(path.dirname(file))
    } finally {
      await lock.release()
    }
  }

  private async openRegular(id: string): Promise<FileHandle> {
    const file = this.locationOf(id)
    let handle: FileHandle
    try {
      handle = await open(file, READ_FLAGS)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'ENOENT') throw new SessionError('SESSION_NOT_FOUND', `session ${id} not found: ${file} does not exist`, file)
      if (code === 'ELOOP') throw new SessionError('SESSION_CORRUPT', `${file}: is a symbolic link, not a session file`, file)
      throw error
    }
    if (!(await handle.stat()).isFile()) {
      await handle.close()
      throw new SessionError('SESSION_CORRUPT', `${file}: is not a regular file`, file)
    }
    return handle
  }

  private async ensureDir() {
    // Only the user may read the logs (they hold whole conversations): 0700 on every directory made.
    const created = await mkdir(this.location, { recursive: true, mode: 0o700 })
    if (!created) return
    // Each directory just made needs its entry in its parent made durable, up to the first one made.
    for (let dir = this.location; ; dir = path.dirname(dir)) {
      await fsyncDir(path.dirname(dir))
      if (dir === created) break
    }
  }
}

async function logsIn(dir: string): Promise<string[]> {
  let entries
  try {
    entries = await readdir(dir, { withFileTypes: true })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith(EXT))
    .map((entry) => entry.name.slice(0, -EXT.length))
    .filter(isSessionId)
}

class JsonlStoreWriter implements StoreWriter {
  private writer?: JsonlWriter

  constructor(private file: string, private handle: FileHandle, private lock: WriterLock) {}

  async cutTail(size: number, tail: Buffer): Promise<string> {
    // Keep the cut bytes before cutting them, so nothing is lost even if we crash in between; a repair
    // run again after such a crash finds the same side file (its name follows from size and bytes).
    const side = await saveSideFile(this.file, tail, size)
    await this.handle.truncate(size)
    await this.handle.sync()
    return side
  }

  appender(size: number, lastSeq: number, options: AppenderOptions): Appender {
    this.writer = new JsonlWriter(this.file, this.handle, size, lastSeq, options)
    return this.writer
  }

  async close(): Promise<void> {
    try {
      if (this.writer) await this.writer.close()
      else await this.handle.close()
    } finally {
      await this.lock.release()
    }
  }
}
