import { isAlive } from '@goalkeeper/kit'
import { randomBytes } from 'node:crypto'
import { link, readFile, stat, unlink, utimes, writeFile } from 'node:fs/promises'
import os from 'node:os'
import { tempFor } from './files.ts'
import { SessionError } from '@goalkeeper/session'

/** Who holds a writer lock, as recorded in the lock file. */
export interface LockHolder {
  pid: number
  host: string
  /** Epoch ms when the lock was taken. */
  since: number
  /** Random per acquisition, so a lock is never mistaken for an older one with the same pid. */
  token: string
}

/** A lock from another host counts as stale once its heartbeat is this old. */
const FOREIGN_STALE_MS = 60_000
const HEARTBEAT_MS = 15_000
/** A breaker file left by a process that died while breaking a stale lock. */
const BREAKER_STALE_MS = 10_000

/**
 * An exclusive inter-process lock on one session file: `<file>.lock`, created with O_EXCL and holding
 * its holder's pid, host and start time. A lock whose holder is gone is stale and taken over: on this
 * host when its pid no longer runs (so a crashed writer never blocks the next one), from another host
 * when its heartbeat (the file's mtime, touched every 15 s) is older than a minute.
 */
export class WriterLock {
  private heartbeat?: NodeJS.Timeout
  private released = false

  private constructor(readonly path: string, readonly holder: LockHolder) {}

  /** Takes the lock or throws `SESSION_LOCKED` naming the live holder. */
  static async acquire(file: string, id: string): Promise<WriterLock> {
    const lockPath = `${file}.lock`
    const holder: LockHolder = { pid: process.pid, host: os.hostname(), since: Date.now(), token: randomBytes(8).toString('hex') }
    for (let attempt = 0; attempt < 5; attempt++) {
      if (await createExclusive(lockPath, JSON.stringify(holder))) {
        const lock = new WriterLock(lockPath, holder)
        lock.startHeartbeat()
        return lock
      }
      const current = await readHolder(lockPath)
      if (current === 'gone') continue
      if (current !== 'unreadable' && !(await isStale(lockPath, current))) throw locked(id, file, current)
      if (current === 'unreadable' && !(await olderThan(lockPath, BREAKER_STALE_MS))) {
        // Lock files appear complete (linked into place), so this one was written by someone else; give it time.
        throw new SessionError('SESSION_LOCKED', `session ${id} is locked by ${lockPath}, which does not name its holder; it is taken over once 10 s old`, file)
      }
      await breakStale(lockPath, current)
    }
    throw new SessionError('SESSION_LOCKED', `session ${id}: could not take the writer lock ${lockPath} (it keeps changing hands)`, file)
  }

  /** Removes the lock file, unless someone else's lock stands there now. */
  async release(): Promise<void> {
    if (this.released) return
    this.released = true
    clearInterval(this.heartbeat)
    const current = await readHolder(this.path)
    if (typeof current === 'object' && current.token === this.holder.token) await unlink(this.path).catch(() => {})
  }

  private startHeartbeat() {
    this.heartbeat = setInterval(() => {
      const now = new Date()
      utimes(this.path, now, now).catch(() => {})
    }, HEARTBEAT_MS)
    this.heartbeat.unref()
  }
}

export function describeHolder(holder: LockHolder): string {
  return `pid ${holder.pid} on ${holder.host} since ${new Date(holder.since).toISOString()}`
}

function locked(id: string, file: string, holder: LockHolder) {
  return Object.assign(new SessionError('SESSION_LOCKED', `session ${id} is open for writing by ${describeHolder(holder)}`, file), { holder })
}

/**
 * Creates `file` holding `content`, or returns false if it exists. The content is written to a temp file
 * first and linked into place, so the lock file is never seen empty or half-written.
 */
async function createExclusive(file: string, content: string): Promise<boolean> {
  const temp = tempFor(file)
  try {
    // Inside the try: a write that fails after the create (a full disk) must not leave the temp behind.
    await writeFile(temp, content, { flag: 'wx', mode: 0o600 })
    await link(temp, file)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw error
  } finally {
    await unlink(temp).catch(() => {})
  }
}

async function readHolder(file: string): Promise<LockHolder | 'gone' | 'unreadable'> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'gone'
    throw error
  }
  try {
    const value = JSON.parse(text)
    if (Number.isInteger(value?.pid) && typeof value.host === 'string' && typeof value.since === 'number' && typeof value.token === 'string') return value
  } catch {}
  return 'unreadable'
}

async function isStale(file: string, holder: LockHolder): Promise<boolean> {
  if (holder.host !== os.hostname()) return olderThan(file, FOREIGN_STALE_MS)
  return holder.pid !== process.pid && !isAlive(holder.pid)
}

async function olderThan(file: string, ms: number): Promise<boolean> {
  try {
    return Date.now() - (await stat(file)).mtimeMs > ms
  } catch {
    return true
  }
}

/**
 * Removes a stale lock without racing another breaker: only the process that creates `<lock>.break`
 * may remove it, and it checks first that the stale holder is still the one standing there (another
 * process may have broken it and taken a fresh lock in between).
 */
async function breakStale(lockPath: string, stale: LockHolder | 'unreadable') {
  const breaker = `${lockPath}.break`
  if (!(await createExclusive(breaker, String(process.pid)))) {
    if (await olderThan(breaker, BREAKER_STALE_MS)) await unlink(breaker).catch(() => {})
    return
  }
  try {
    const current = await readHolder(lockPath)
    const same = current === stale || (typeof current === 'object' && typeof stale === 'object' && current.token === stale.token)
    if (same) await unlink(lockPath).catch(() => {})
  } finally {
    await unlink(breaker).catch(() => {})
  }
}
