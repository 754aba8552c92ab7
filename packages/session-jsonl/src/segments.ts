import { constants, type BigIntStats } from 'node:fs'
import { link, lstat, open, rename, unlink } from 'node:fs/promises'
import path from 'node:path'
import { parseSegmentIndex, type SegmentEntry, SessionError, type StoredSegment } from '@goalkeeper/session'
import { fsyncDir, replaceFile, tempFor } from './files.ts'
import type { FileIdentity } from './writer.ts'

/**
 * A log kept as segments: `<id>.jsonl` is the live (last) one, written to; `<id>.jsonl.000001`, ... are
 * the closed ones, oldest first, never written again; `<id>.jsonl.segments` is their signed index. The
 * log is their concatenation: every offset outside this package is one of it.
 */

/** Digits of a closed segment's number in its name: sorts as it counts, up to 999,999 segments. */
const DIGITS = 6

export function segmentFile(file: string, n: number): string {
  return `${file}.${String(n).padStart(DIGITS, '0')}`
}

export function segmentIndexOf(file: string): string {
  return `${file}.segments`
}

/** A closed segment as found, with its stat (for the log's version token). */
export interface FoundSegment extends StoredSegment {
  info: BigIntStats
}

/**
 * The closed segments of the log at `file`, found by number from 1 until one is missing, given the live
 * file's identity: a segment that is that same file (hard-linked by a rollover not yet finished, or being
 * finished by its writer now) is `pending`, not closed: its bytes are the live file's, read once.
 * Readers open the live file first and then look for segments, so a rollover under way between the two
 * is seen either as not begun or as pending, never as its segment twice or not at all.
 */
export async function findSegments(file: string, live: FileIdentity): Promise<{ closed: FoundSegment[]; pending?: FoundSegment }> {
  const closed: FoundSegment[] = []
  let start = 0
  for (let n = 1; ; n++) {
    const location = segmentFile(file, n)
    let info: BigIntStats
    try {
      info = await lstat(location, { bigint: true })
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'ENOENT' || code === 'ENOTDIR') return { closed }
      throw error
    }
    if (!info.isFile()) throw new SessionError('SESSION_CORRUPT', `${location}: is not a regular file`, location)
    const found = { n, start, length: Number(info.size), location, info }
    if (Number(info.ino) === live.ino && Number(info.dev) === live.dev) return { closed, pending: found }
    closed.push(found)
    start += found.length
  }
}

/** The index as written (not verified: the service does that before trusting the log); [] when none. */
export async function readIndexEntries(file: string, read: (file: string) => Promise<string | undefined>): Promise<SegmentEntry[] | undefined> {
  const text = await read(segmentIndexOf(file))
  if (text === undefined) return []
  return parseSegmentIndex(text)
}

/**
 * Under the writer lock, before the log is read: finishes or undoes a rollover a crash interrupted, so
 * that the log is one consistent concatenation again. A rollover links the live file as the next
 * segment, makes that durable, writes the index naming it, then replaces the live file by an empty one.
 * Killed before the index names the link: the link is removed (the live file still holds those bytes).
 * Killed after: the empty live file is made (nothing was written after the link). Nothing is read twice
 * or lost either way; a closed segment that is missing or edited is left for the service to report.
 */
export async function recoverRollover(file: string, live: FileIdentity, index: SegmentEntry[] | undefined): Promise<'none' | 'undone' | 'finished'> {
  const { pending } = await findSegments(file, live)
  if (!pending) return 'none'
  const named = index?.find((entry) => entry.n === pending.n)
  if (named && named.length === pending.length && named.start === pending.start) {
    await replaceLive(file)
    return 'finished'
  }
  await unlink(pending.location)
  await fsyncDir(path.dirname(file))
  return 'undone'
}

/**
 * Closes the live file as segment `entry.n`: links it, writes the index (`indexText`, signed, naming it)
 * and replaces the live file by an empty one, each step durable before the next. Returns the new live
 * file's identity. The caller has made every byte of the live file durable and writes nothing more to it.
 */
export async function rollOver(file: string, entry: SegmentEntry, indexText: string, live: FileIdentity): Promise<FileIdentity> {
  const dir = path.dirname(file)
  const segment = segmentFile(file, entry.n)
  try {
    await link(file, segment)
  } catch (error) {
    // Left by an attempt that failed after the link: the same file is fine, anything else is not ours.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    const there = await lstat(segment)
    if (there.ino !== live.ino || there.dev !== live.dev) throw new Error(`${segment} exists and is not the live segment it should close`, { cause: error })
  }
  // The link durable before the index names it, and both before the live file is replaced: a crash at any
  // point leaves the bytes reachable by one name the next open understands (`recoverRollover`).
  await fsyncDir(dir)
  await replaceFile(segmentIndexOf(file), indexText)
  return replaceLive(file)
}

/** Puts an empty live file in place, atomically (temp, fsync, rename), durably; returns its identity. */
async function replaceLive(file: string): Promise<FileIdentity> {
  const temp = tempFor(file)
  let identity: FileIdentity
  try {
    const handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600)
    try {
      await handle.sync()
      const info = await handle.stat()
      identity = { dev: info.dev, ino: info.ino }
    } finally {
      await handle.close()
    }
    await rename(temp, file)
  } catch (error) {
    await unlink(temp).catch(() => {})
    throw error
  }
  await fsyncDir(path.dirname(file))
  return identity
}
