import { isAlive } from '@goalkeeper/kit'
import { createHash, randomBytes } from 'node:crypto'
import { type FileHandle, link, open, readdir, readFile, rename, stat, unlink } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'

/** A temp file written by another host is left alone this long: its pid cannot be checked from here. */
const FOREIGN_TEMP_MS = 60_000

/**
 * The temp file a write of `file` goes through: `.<name>.<host>-<pid>-<random>.tmp`, next to it. The
 * host and pid say whose it is, so a temp left by a killed process can be told from one being written.
 */
export function tempFor(file: string): string {
  return path.join(path.dirname(file), `.${path.basename(file)}.${hostTag()}-${process.pid}-${randomBytes(4).toString('hex')}.tmp`)
}

/** The host name as it appears in temp names: no dots, so the name parses back. */
function hostTag(): string {
  return os.hostname().replace(/[^A-Za-z0-9-]/g, '_')
}

/**
 * Removes the temp files of `file` (its own, its lock's, its side files') that a killed process left:
 * those of a pid no longer running on this host, or of another host after a minute. A temp of a live
 * writer is never touched. Returns the names removed.
 */
export async function removeStaleTemps(file: string): Promise<string[]> {
  const dir = path.dirname(file)
  const prefix = `.${path.basename(file)}.`
  const removed: string[] = []
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (!name.startsWith(prefix)) continue
    const owner = /\.([A-Za-z0-9_-]+)-(\d+)-[0-9a-f]{8}\.tmp$/.exec(name)
    if (!owner || !(await isStaleTemp(path.join(dir, name), owner[1], Number(owner[2])))) continue
    await unlink(path.join(dir, name)).then(() => removed.push(name), () => {})
  }
  return removed
}

async function isStaleTemp(temp: string, host: string, pid: number): Promise<boolean> {
  if (host !== hostTag()) {
    const info = await stat(temp).catch(() => undefined)
    return !!info && Date.now() - info.mtimeMs > FOREIGN_TEMP_MS
  }
  return pid !== process.pid && !isAlive(pid)
}

/** Makes a new or removed directory entry durable; on Linux a file's own fsync does not cover it. */
export async function fsyncDir(dir: string): Promise<void> {
  if (process.platform === 'win32') return
  const handle = await open(dir, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/**
 * Creates `file` holding `content`, durably and atomically: the file appears complete or not at all,
 * and an existing file is never replaced (`link` fails with EEXIST where `rename` would overwrite).
 */
export async function createFileExclusive(file: string, content: Buffer | string): Promise<void> {
  const dir = path.dirname(file)
  const temp = tempFor(file)
  try {
    await writeNewDurably(temp, content)
    await link(temp, file)
  } finally {
    await unlink(temp).catch(() => {})
  }
  await fsyncDir(dir)
}

/** Creates `file` (exclusively) holding `content`, fsync'd. */
async function writeNewDurably(file: string, content: Buffer | string, mode?: number): Promise<void> {
  const handle = await open(file, 'wx', mode)
  try {
    await handle.writeFile(content)
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/**
 * Writes `file` whole through a temp file, fsync'd, renamed over whatever was there. The directory is
 * not fsync'd here: the caller's next durable create in the same directory covers the entry.
 */
export async function replaceFile(file: string, content: Buffer | string): Promise<void> {
  const temp = tempFor(file)
  try {
    await writeNewDurably(temp, content, 0o600)
    await rename(temp, file)
  } catch (error) {
    await unlink(temp).catch(() => {})
    throw error
  }
}

/**
 * Saves bytes cut from a session file at byte `offset` next to it, as `<file>.torn-<offset>-<hash>`.
 * The name follows from what is saved, so a repair killed after saving and run again finds its own
 * side file (same bytes: kept as it is) instead of adding a second copy.
 */
export async function saveSideFile(file: string, bytes: Buffer, offset: number): Promise<string> {
  const side = `${file}.torn-${offset}-${createHash('sha256').update(bytes).digest('hex').slice(0, 12)}`
  try {
    await createFileExclusive(side, bytes)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    const existing = await readFile(side)
    if (!existing.equals(bytes)) throw new Error(`${side} exists and holds other bytes than the torn tail it should keep`, { cause: error })
  }
  return side
}

export async function writeAll(handle: FileHandle, buffer: Buffer, position: number): Promise<void> {
  let offset = 0
  while (offset < buffer.length) {
    const { bytesWritten } = await handle.write(buffer, offset, buffer.length - offset, position + offset)
    offset += bytesWritten
  }
}

export async function readAll(handle: FileHandle, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length)
  let offset = 0
  while (offset < length) {
    const { bytesRead } = await handle.read(buffer, offset, length - offset, offset)
    if (bytesRead === 0) throw new Error(`expected ${length} bytes, the file holds ${offset}`)
    offset += bytesRead
  }
  return buffer
}
