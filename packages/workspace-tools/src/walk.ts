import path from 'node:path'
import { constants } from 'node:fs'
import { lstat, mkdir, open, type FileHandle } from 'node:fs/promises'
import { WorkspaceError, fsError } from './errors.ts'
import { descriptorPaths } from './proc-fd.ts'
import type { Resolved } from './paths.ts'

/**
 * Linux's O_PATH (the same value on every architecture Node runs on there; `fs.constants` lacks it):
 * the descriptor only anchors lookups, so a directory needs search permission only, as when a path
 * passes through it. Elsewhere the descriptor is a check only and needs read permission.
 */
const O_PATH = 0o10000000
/** O_NONBLOCK in case a FIFO is met: O_DIRECTORY refuses it before it could block anyway. */
const directoryFlags = () => (descriptorPaths() ? O_PATH : constants.O_RDONLY | constants.O_NONBLOCK) | constants.O_DIRECTORY

export const swapped = (what: string, shown: string) => new WorkspaceError('PATH_OUTSIDE_ROOT', what === shown
  ? `"${shown}" became a symbolic link after it was checked; it was not followed.`
  : `"${what}", on the way to "${shown}", became a symbolic link after it was checked; it was not followed.`)

/**
 * A directory inside the root, open, and reached from the root's descriptor one real directory at a
 * time, never through a symbolic link. Entries are named relative to the descriptor
 * (`/proc/self/fd/N/name`), so whatever happens to the path it was reached by (a directory higher
 * up renamed away and replaced by a link to the outside) cannot change what they name. Without
 * /proc (see proc-fd.ts) entries are named by their real path again, as before the walk existed.
 */
export class Dir {
  private constructor(private handle: FileHandle, readonly real: string, readonly shown: string) {}

  /** The root, opened by its real path (the root itself is trusted; what is below it is not). */
  static async root(real: string): Promise<Dir> {
    try {
      return new Dir(await open(real, directoryFlags()), real, '.')
    } catch {
      throw new WorkspaceError('ROOT_NOT_FOUND', `The workspace root ${real} does not exist or is not a directory.`)
    }
  }

  /** This directory, for calls that take a path: readdir, a command's cwd. */
  get self(): string {
    return descriptorPaths() ? `/proc/self/fd/${this.handle.fd}` : this.real
  }

  /** The entry `name` of this directory; `.` is the directory itself. */
  at(name: string): string {
    return descriptorPaths() ? `${this.self}/${name}` : path.join(this.real, name)
  }

  /**
   * Opens the subdirectory `name` without following a link. A link (or a directory again, after
   * ENOTDIR) found there now was swapped in since the path was checked: refused, even one that
   * points inside, because the tree changed under the call. `create` makes a missing one.
   */
  async enter(name: string, shown: string, options: { create?: boolean; notDirectory?: string } = {}): Promise<Dir> {
    // Resolved paths are normalised; a "." or ".." here would be a bug, and ".." would lead up.
    if (!name || name === '.' || name === '..' || name.includes('/')) throw new Error(`Unexpected path component "${name}"`)
    const at = this.at(name)
    const here = this.shown === '.' ? name : `${this.shown}/${name}`
    for (let created = false; ; created = true) {
      try {
        return new Dir(await open(at, directoryFlags() | constants.O_NOFOLLOW), path.join(this.real, name), here)
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code
        if (code === 'ENOENT' && options.create && !created) {
          await mkdir(at).catch((failed) => (failed as NodeJS.ErrnoException).code === 'EEXIST' || fsError(failed, shown))
          continue
        }
        if (code === 'ELOOP' || code === 'ENOTDIR') {
          // Gone by now: say so, rather than guess what it was.
          const info = await lstat(at).catch((gone) => fsError(gone, shown))
          if (code === 'ELOOP' || info.isSymbolicLink() || info.isDirectory()) throw swapped(here, shown)
          if (options.notDirectory) throw new WorkspaceError('NOT_A_DIRECTORY', options.notDirectory)
        }
        return fsError(error, shown)
      }
    }
  }

  close(): Promise<void> {
    return this.handle.close()
  }
}

/** The components of a resolved path below its root (empty for the root itself). */
const componentsOf = (target: Resolved) => path.relative(target.root, target.real).split(path.sep).filter(Boolean)

async function descend(target: Resolved, parts: string[], options: { create?: boolean; notDirectory?: string }): Promise<Dir> {
  let dir = await Dir.root(target.root)
  try {
    for (const [index, name] of parts.entries()) {
      const last = index === parts.length - 1
      const next = await dir.enter(name, target.shown, { create: options.create, notDirectory: last ? options.notDirectory : undefined })
      // Not awaited: nothing names this descriptor any more, and each wait costs a thread-pool round trip.
      void dir.close().catch(() => undefined)
      dir = next
    }
    return dir
  } catch (error) {
    await dir.close()
    throw error
  }
}

/**
 * Opens the directory that holds `target` (its real path, as checked) by walking down from the root,
 * and names the entry in it: `.` when the target is the root. `create` makes missing directories on
 * the way (write_file). The directory must be closed by the caller.
 */
export async function openParent(target: Resolved, options: { create?: boolean } = {}): Promise<{ dir: Dir; name: string }> {
  const parts = componentsOf(target)
  const name = parts.pop() ?? '.'
  return { dir: await descend(target, parts, options), name }
}

/** Runs `use` on the entry naming `target` while the directory holding it is open. */
export async function atTarget<T>(target: Resolved, use: (where: string, dir: Dir, name: string) => Promise<T>, options: { create?: boolean } = {}): Promise<T> {
  const { dir, name } = await openParent(target, options)
  try {
    return await use(dir.at(name), dir, name)
  } finally {
    await dir.close()
  }
}

/** Opens `target` itself as a directory, walking down from the root; `notDirectory` is the message when it is something else. */
export function openDirectory(target: Resolved, notDirectory: string): Promise<Dir> {
  return descend(target, componentsOf(target), { notDirectory })
}
