import { closeSync, constants, createReadStream, existsSync, fstatSync, lstatSync, openSync, readdirSync, readSync } from 'node:fs'
import { type FileHandle, lstat, mkdir, open, readdir, unlink } from 'node:fs/promises'
import path from 'node:path'
import { createHash } from 'node:crypto'
import { createFileExclusive, fsyncDir, removeStaleTemps, replaceFile, saveSideFile } from './files.ts'
import { WriterLock } from './lock.ts'
import { type Appender, type AppenderOptions, isSessionId, type LogSnapshot, type SegmentEntry, SessionError, type SessionStore, type StoreWriter } from '@goalkeeper/session'
import { findSegments, readIndexEntries, recoverRollover, segmentFile, segmentIndexOf } from './segments.ts'
import { FileSummaryIndex } from './summary-files.ts'
import { type FileIdentity, JsonlWriter } from './writer.ts'

/** What a live segment holds before the next checkpoint starts a new one (`segmentBytes` of the plugin). */
export const SEGMENT_BYTES = 64 * 1024 * 1024

const EXT = '.jsonl'
/** Read size of a log: large enough that a replay makes few calls, small enough to be nothing held. */
const CHUNK_BYTES = 1 << 20
/** More than a seal or a checkpoint index entry ever holds: anything longer does not verify anyway. */
const SEAL_READ_BYTES = 1024
/**
 * More than a segment index ever holds (about 150 bytes per segment: a million segments of the default
 * size are 64 TiB); a longer one is cut and does not verify.
 */
const INDEX_READ_BYTES = 1 << 28
/** What `readSeal` gives for something at the seal's path that is not a file: it never verifies. */
const NOT_A_SEAL = 'not a regular file'
// Never block on a FIFO or device someone put in the store, never follow a link planted there.
const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW

/**
 * Session logs as `<dir>/<id>.jsonl`, one writer per file through `<id>.jsonl.lock`. `olderDirs` are
 * where logs used to be kept: their logs are listed, read and written where they are; new ones go to `dir`.
 * `everywhere` is the directory holding every project's default store: a session of another project is
 * found there by its id, and listed with `list({ everywhere: true })`.
 */
export class JsonlFileStore implements SessionStore {
  readonly location: string
  readonly olderDirs: readonly string[]
  readonly everywhere?: string
  /** A checkpoint starts a new segment once the live one holds this many bytes; 0: a log stays one file. */
  readonly segmentBytes: number

  constructor(dir: string, options: { olderDirs?: readonly string[]; everywhere?: string; segmentBytes?: number } = {}) {
    this.location = path.resolve(dir)
    this.segmentBytes = options.segmentBytes ?? SEGMENT_BYTES
    this.olderDirs = [...new Set((options.olderDirs ?? []).map((d) => path.resolve(d)))].filter((d) => d !== this.location)
    if (options.everywhere) this.everywhere = path.resolve(options.everywhere)
  }

  /** The other projects' default stores: the real directories (never links) under `everywhere`. */
  private otherDirs(): string[] {
    if (!this.everywhere) return []
    let names: string[]
    try {
      names = readdirSync(this.everywhere)
    } catch {
      return []
    }
    const mine = new Set(this.dirs)
    return names.map((name) => path.join(this.everywhere!, name)).filter((dir) => {
      if (mine.has(dir)) return false
      try {
        return lstatSync(dir).isDirectory()
      } catch {
        return false
      }
    })
  }

  /** Every directory this store reads, its own first. */
  get dirs(): string[] {
    return [this.location, ...this.olderDirs]
  }

  locationOf(id: string): string {
    const file = `${id}${EXT}`
    // A session is found where it is; one in no directory yet (being created) belongs to the store's own.
    if (existsSync(path.join(this.location, file))) return path.join(this.location, file)
    for (const dir of this.olderDirs) {
      if (existsSync(path.join(dir, file))) return path.join(dir, file)
    }
    // A session of another project, named by its id from here.
    if (isSessionId(id)) {
      for (const dir of this.otherDirs()) {
        if (existsSync(path.join(dir, file))) return path.join(dir, file)
      }
    }
    return path.join(this.location, file)
  }

  async create(id: string, content: Buffer, seal?: string): Promise<StoreWriter> {
    // An id taken in an older directory is taken.
    if (this.locationOf(id) !== path.join(this.location, `${id}${EXT}`)) throw new SessionError('SESSION_EXISTS', `session ${id} already exists: ${this.locationOf(id)}`, this.locationOf(id))
    const file = this.locationOf(id)
    await this.ensureDir()
    await checkDir(path.dirname(file))
    const lock = await WriterLock.acquire(file, id)
    try {
      // Under the lock nobody else creates this log, so a log found here is taken, and its seal is not ours to replace.
      if (existsSync(file)) throw new SessionError('SESSION_EXISTS', `session ${id} already exists: ${file}`, file)
      // The seal first: the log's own create makes both entries durable with one directory fsync.
      if (seal !== undefined) await replaceFile(sealOf(file), seal)
      await createFileExclusive(file, content).catch((error: NodeJS.ErrnoException) => {
        throw error.code === 'EEXIST' ? new SessionError('SESSION_EXISTS', `session ${id} already exists: ${file}`, file) : error
      })
      return new JsonlStoreWriter(file, (await this.identify(id)).identity, lock, { bytes: this.segmentBytes, liveStart: 0, entries: [] })
    } catch (error) {
      await lock.release()
      throw error
    }
  }

  async openForWrite(id: string): Promise<{ size: number; chunks: AsyncIterable<Buffer>; writer: StoreWriter }> {
    const file = this.locationOf(id)
    // Not found is reported before the lock, whose file could not be created in a missing directory.
    await checkDir(path.dirname(file))
    await this.version(id)
    const lock = await WriterLock.acquire(file, id)
    try {
      // What a process killed mid-write (of this log, its lock or a side file) left behind.
      await removeStaleTemps(file)
      const entries = await readIndexEntries(file, readIndex)
      await recoverRollover(file, (await this.identify(id)).identity, entries)
      const { size, identity, liveStart } = await this.identify(id)
      // An index that does not parse, or does not name what is there, is the service's to report (it
      // refuses the log); a log that is written goes on from the segments as they are.
      const named = entries?.filter((entry) => entry.start < liveStart) ?? []
      return { size, chunks: this.stream(id, { end: size }), writer: new JsonlStoreWriter(file, identity, lock, { bytes: this.segmentBytes, liveStart, entries: named }) }
    } catch (error) {
      await lock.release()
      throw error
    }
  }

  async readSeal(id: string): Promise<string | undefined> {
    return readSmall(sealOf(this.locationOf(id)))
  }

  async readCheckpointIndex(id: string): Promise<string | undefined> {
    return readSmall(checkpointsOf(this.locationOf(id)))
  }

  async writeCheckpointIndex(id: string, text: string): Promise<void> {
    await replaceFile(checkpointsOf(this.locationOf(id)), text)
  }

  async readSegmentIndex(id: string): Promise<string | undefined> {
    return readSmall(segmentIndexOf(this.locationOf(id)), INDEX_READ_BYTES)
  }

  async segments(id: string) {
    const file = this.locationOf(id)
    const { identity } = await this.identify(id)
    const { closed, pending } = await findSegments(file, identity)
    const strip = ({ n, start, length, location }: { n: number; start: number; length: number; location: string }) => ({ n, start, length, location })
    return { closed: closed.map(strip), ...(pending && { pending: strip(pending) }) }
  }

  /**
   * The log as the concatenation of its closed segments and the live file. The live file is opened first,
   * then the segments are found: a rollover under way meanwhile is then seen whole or not at all (its new
   * segment is the file already open, read once), and every offset is the same either way.
   */
  async *stream(id: string, range: { start?: number; end?: number } = {}): AsyncIterable<Buffer> {
    const start = range.start ?? 0
    if (range.end !== undefined && range.end <= start) {
      // Still an error for a log that is not there, as for any other range.
      await this.version(id)
      return
    }
    const file = this.locationOf(id)
    let live: FileHandle | undefined = await this.openRegular(id)
    try {
      const info = await live.stat()
      const { closed } = await findSegments(file, { dev: info.dev, ino: info.ino })
      const liveStart = closed.reduce((sum, segment) => sum + segment.length, 0)
      for (const segment of closed) {
        const from = Math.max(start, segment.start)
        const to = Math.min(range.end ?? Infinity, segment.start + segment.length)
        if (from >= to) continue
        const handle = await openSegment(segment.location)
        yield* createReadStream('', { fd: handle, start: from - segment.start, end: to - segment.start - 1, highWaterMark: CHUNK_BYTES }) as AsyncIterable<Buffer>
      }
      if (range.end !== undefined && range.end <= liveStart) return
      const handle = live
      live = undefined
      // createReadStream closes the handle when the stream ends or is destroyed (also by a consumer that stops early).
      yield* createReadStream('', { fd: handle, start: Math.max(0, start - liveStart), ...(range.end !== undefined && { end: range.end - liveStart - 1 }), highWaterMark: CHUNK_BYTES }) as AsyncIterable<Buffer>
    } finally {
      await live?.close()
    }
  }

  /**
   * The log's size (every segment's) and a token of all its files: the live file's device, inode, size,
   * mtime and ctime, and the same of each closed segment and of the segment index, so that any change to
   * any of them changes it (closed segments are never written again; one edited anyway shows here, and in
   * the chain when the log is read).
   */
  async version(id: string): Promise<{ size: number; token: string }> {
    const { size, identity, info, closed } = await this.identify(id)
    // The change time is set by the kernel on every write, truncate, rename or utimes, and cannot be set back.
    const token = `${identity.dev}:${identity.ino}:${size}:${info.mtimeNs}:${info.ctimeNs}`
    if (!closed.length) return { size, token }
    const index = await lstat(segmentIndexOf(this.locationOf(id)), { bigint: true }).catch(() => undefined)
    const parts = [...closed.map((segment) => segment.info), ...(index ? [index] : [])].map((s) => `${s.dev}:${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`)
    return { size, token: `${token}:${closed.length}:${createHash('sha256').update(parts.join('|')).digest('hex').slice(0, 16)}` }
  }

  /**
   * A small log of one piece with its version and seal, in one open of each: open (never through a
   * link), fstat (the same fields `version` takes from lstat, so the same token), a look for a first
   * closed segment, the seal, then the bytes. The calls are synchronous: each is a few microseconds on a
   * local disk, and a listing that awaits each one spends more on the wait than on the call.
   */
  async snapshot(id: string, maxBytes: number): Promise<LogSnapshot | undefined> {
    const file = this.locationOf(id)
    let fd: number
    try {
      fd = openSync(file, READ_FLAGS)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'ENOENT' || code === 'ENOTDIR') throw new SessionError('SESSION_NOT_FOUND', `session ${id} not found: ${file} does not exist`, file)
      if (code === 'ELOOP') throw new SessionError('SESSION_CORRUPT', `${file}: is a symbolic link, not a session file`, file)
      throw error
    }
    try {
      const info = fstatSync(fd, { bigint: true })
      if (!info.isFile()) throw new SessionError('SESSION_CORRUPT', `${file}: is not a regular file`, file)
      const size = Number(info.size)
      if (size > maxBytes) return undefined
      // A first segment (closed, or the live file being closed) makes the log several files: `stream` reads those.
      if (lstatSync(segmentFile(file, 1), { throwIfNoEntry: false })) return undefined
      const token = `${Number(info.dev)}:${Number(info.ino)}:${size}:${info.mtimeNs}:${info.ctimeNs}`
      // The seal after the size and before the bytes, as a listing reads them: a writer seals only what it
      // wrote, so the bytes up to that size are never behind what the seal says of them.
      const seal = readSmallSync(sealOf(file))
      const bytes = Buffer.allocUnsafe(size)
      let read = 0
      while (read < size) {
        const n = readSync(fd, bytes, read, size - read, read)
        if (n === 0) break
        read += n
      }
      return { size, token, bytes: read < size ? bytes.subarray(0, read) : bytes, ...(seal !== undefined && { seal }) }
    } finally {
      closeSync(fd)
    }
  }

  /**
   * The summary index of each directory: the store's own first (where every entry of its logs and of
   * its older directories' goes), then, with `everywhere`, every other project's (only read).
   */
  indexes(options: { everywhere?: boolean } = {}): FileSummaryIndex[] {
    return [this.location, ...(options.everywhere ? this.otherDirs() : [])].map((dir) => new FileSummaryIndex(dir, checkDir))
  }

  private async identify(id: string) {
    const file = this.locationOf(id)
    let info
    try {
      info = await lstat(file, { bigint: true })
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'ENOENT' || code === 'ENOTDIR') throw new SessionError('SESSION_NOT_FOUND', `session ${id} not found: ${file} does not exist`, file)
      throw error
    }
    if (info.isSymbolicLink()) throw new SessionError('SESSION_CORRUPT', `${file}: is a symbolic link, not a session file`, file)
    if (!info.isFile()) throw new SessionError('SESSION_CORRUPT', `${file}: is not a regular file`, file)
    const identity = { dev: Number(info.dev), ino: Number(info.ino) }
    const { closed } = await findSegments(file, identity)
    const liveStart = closed.reduce((sum, segment) => sum + segment.length, 0)
    return { size: liveStart + Number(info.size), liveStart, identity, info, closed }
  }

  async list(options: { everywhere?: boolean } = {}): Promise<string[]> {
    const ids = new Set<string>()
    for (const dir of options.everywhere ? [...this.dirs, ...this.otherDirs()] : this.dirs) {
      await checkDir(dir)
      for (const id of await logsIn(dir)) ids.add(id)
    }
    return [...ids]
  }

  async remove(id: string): Promise<void> {
    const file = this.locationOf(id)
    await checkDir(path.dirname(file))
    const lock = await WriterLock.acquire(file, id)
    try {
      const { closed, pending } = await findSegments(file, (await this.identify(id)).identity)
      await unlink(file)
      // Every segment, also those past a gap (one removed by hand), up to what the index names.
      const named = (await readIndexEntries(file, readIndex).catch(() => undefined)) ?? []
      const last = Math.max(pending?.n ?? 0, ...closed.map((s) => s.n), ...named.map((s) => s.n))
      for (let n = 1; n <= last; n++) await unlink(segmentFile(file, n)).catch(() => {})
      await unlink(segmentIndexOf(file)).catch(() => {})
      await unlink(sealOf(file)).catch(() => {})
      await unlink(checkpointsOf(file)).catch(() => {})
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
    await checkDir(this.location)
    // Only the user may read the logs (they hold whole conversations): 0700 on every directory made.
    const created = await mkdir(this.location, { recursive: true, mode: 0o700 }).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'EEXIST' || error.code === 'ENOTDIR') throw configError(`dir of the session plugin: ${this.location} cannot be made: a file stands in its path`, error)
      throw error
    })
    if (!created) return
    // Each directory just made needs its entry in its parent made durable, up to the first one made.
    for (let dir = this.location; ; dir = path.dirname(dir)) {
      await fsyncDir(path.dirname(dir))
      if (dir === created) break
    }
  }
}

/**
 * A directory of the store must be one, and not a symbolic link: a link planted in its place would
 * have logs, locks and the summary index written wherever it points (`/etc`, as root). Checked before
 * anything is written there or listed from it; a directory that does not exist yet is fine.
 */
async function checkDir(dir: string): Promise<void> {
  let info
  try {
    info = await lstat(dir)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return
    if ((error as NodeJS.ErrnoException).code === 'ENOTDIR') throw configError(`dir of the session plugin: ${dir} is not a directory (a file stands in its path)`, error)
    throw error
  }
  if (info.isSymbolicLink()) throw configError(`dir of the session plugin: ${dir} is a symbolic link; sessions are never kept through a link (it could lead anywhere): give the real directory`)
  if (!info.isDirectory()) throw configError(`dir of the session plugin: ${dir} is a file, not a directory`)
}

function configError(message: string, cause?: unknown) {
  return Object.assign(new SessionError('SESSION_CONFIG', message), { cause })
}

/**
 * A seal or checkpoint index: small, read in one call. Something planted there that is not a file reads
 * as text that never verifies.
 */
async function readSmall(file: string, most = SEAL_READ_BYTES): Promise<string | undefined> {
  let handle: FileHandle
  try {
    handle = await open(file, READ_FLAGS)
  } catch (error) {
    return unopenedSmall(error)
  }
  try {
    const info = await handle.stat()
    if (!info.isFile()) return NOT_A_SEAL
    const length = Math.min(most, Math.max(info.size, SEAL_READ_BYTES))
    const buffer = Buffer.alloc(length)
    const { bytesRead } = await handle.read(buffer, 0, length, 0)
    // Empty: made by a writer killed before it wrote the first seal of a log from before seals. As
    // good as none (emptying a seal is no more than removing it, which the header's mark catches).
    return bytesRead ? buffer.toString('utf8', 0, bytesRead) : undefined
  } finally {
    await handle.close()
  }
}

/** What a small file that could not be opened reads as: none when missing, never verifying when a link. */
function unopenedSmall(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException).code
  if (code === 'ENOENT' || code === 'ENOTDIR') return undefined
  if (code === 'ELOOP') return NOT_A_SEAL
  throw error
}

/** `readSmall` in synchronous calls, for `snapshot`. */
function readSmallSync(file: string): string | undefined {
  let fd: number
  try {
    fd = openSync(file, READ_FLAGS)
  } catch (error) {
    return unopenedSmall(error)
  }
  try {
    if (!fstatSync(fd).isFile()) return NOT_A_SEAL
    const buffer = Buffer.alloc(SEAL_READ_BYTES)
    const bytesRead = readSync(fd, buffer, 0, SEAL_READ_BYTES, 0)
    return bytesRead ? buffer.toString('utf8', 0, bytesRead) : undefined
  } finally {
    closeSync(fd)
  }
}

function readIndex(file: string): Promise<string | undefined> {
  return readSmall(file, INDEX_READ_BYTES)
}

/** A closed segment opened for reading, never through a link, and only if it is a regular file. */
async function openSegment(location: string): Promise<FileHandle> {
  const handle = await open(location, READ_FLAGS).catch((error: NodeJS.ErrnoException) => {
    // Gone between finding and opening it: removed by hand (a rollover never removes one).
    throw error.code === 'ENOENT' ? new SessionError('SESSION_CORRUPT', `${location}: the segment was removed while the log was read`, location) : error
  })
  if (!(await handle.stat()).isFile()) {
    await handle.close()
    throw new SessionError('SESSION_CORRUPT', `${location}: is not a regular file`, location)
  }
  return handle
}

/** Where the checkpoint index of a log is kept: beside it, like its seal. */
function checkpointsOf(file: string): string {
  return `${file}.checkpoint`
}

/** Where the seal of a log is kept: beside it, so that cutting the log does not cut the seal. */
function sealOf(file: string): string {
  return `${file}.seal`
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

  /** Holds no descriptor: the log is opened for each write (an idle session costs none). */
  constructor(private file: string, private identity: FileIdentity, private lock: WriterLock, private segmenting: { bytes: number; liveStart: number; entries: SegmentEntry[] }) {}

  async cutTail(size: number, tail: Buffer): Promise<string> {
    // A closed segment was durable whole before the next began: a crash only tears the live one.
    if (size < this.segmenting.liveStart) throw new Error(`${this.file}: cannot cut the log at byte ${size}, inside its closed segments (the live segment starts at ${this.segmenting.liveStart})`)
    // Keep the cut bytes before cutting them, so nothing is lost even if we crash in between; a repair
    // run again after such a crash finds the same side file (its name follows from size and bytes).
    const side = await saveSideFile(this.file, tail, size)
    const handle = await open(this.file, 'r+')
    try {
      await handle.truncate(size - this.segmenting.liveStart)
      await handle.sync()
    } finally {
      await handle.close()
    }
    return side
  }

  appender(size: number, lastSeq: number, options: AppenderOptions): Appender {
    const { bytes, liveStart, entries } = this.segmenting
    // Only a log signed per batch is split: its checkpoints start batches, where a segment can begin.
    const segmenting = bytes > 0 && options.batches && options.segmentIndex ? { bytes, liveStart, entries } : undefined
    this.writer = new JsonlWriter(this.file, this.identity, size, lastSeq, options, sealOf(this.file), segmenting ?? (liveStart ? { bytes: Infinity, liveStart, entries } : undefined))
    return this.writer
  }

  async close(): Promise<void> {
    try {
      await this.writer?.close()
    } finally {
      await this.lock.release()
    }
  }
}
