import path from 'node:path'
import { lstat, readlink, realpath, stat } from 'node:fs/promises'
import { WorkspaceError, fsError } from './errors.ts'

export interface Resolved {
  /** Real absolute path to operate on (symlinks resolved, possibly not existing yet). */
  real: string
  /** The path as the model should refer to it: relative to the root, `.` for the root itself. */
  shown: string
  /** Real path of the root. */
  root: string
}

const MAX_LINKS = 40
/** PATH_MAX and NAME_MAX on Linux; checked up front so the model gets a clear error, not ENAMETOOLONG. */
const MAX_PATH_CHARS = 4096
const MAX_NAME_BYTES = 255

const preview = (input: string) => (input.length > 60 ? `${input.slice(0, 60)}...` : input)

/** Refuses input that no file system call should see: NUL, oversized paths, and forms a model means differently. */
function checkInput(input: string) {
  if (input.includes('\0')) throw new WorkspaceError('INVALID_PATH', 'Paths cannot contain NUL characters.')
  if (input.length > MAX_PATH_CHARS) {
    throw new WorkspaceError('INVALID_PATH', `The path "${preview(input)}" is too long (${input.length} characters; the limit is ${MAX_PATH_CHARS}).`)
  }
  if (input.split('/').some((name) => Buffer.byteLength(name) > MAX_NAME_BYTES)) {
    throw new WorkspaceError('INVALID_PATH', `The path "${preview(input)}" has a file or directory name that is too long (more than ${MAX_NAME_BYTES} bytes).`)
  }
  // On POSIX a backslash is an ordinary character: "src\\a.ts" would silently name a new file in the root.
  if (path.sep === '/' && input.includes('\\')) {
    throw new WorkspaceError('INVALID_PATH', `The path "${preview(input)}" contains a backslash. Use "/" to separate directories; paths are relative to the workspace root.`)
  }
  if (/^~[\w.-]*(\/|$)/.test(input)) {
    throw new WorkspaceError('INVALID_PATH', `"~" is not expanded: paths are relative to the workspace root, not the home directory. For a file really named "${preview(input)}", write "./${preview(input)}".`)
  }
}

export const within = (child: string, parent: string) =>
  child === parent || child.startsWith(parent.endsWith(path.sep) ? parent : parent + path.sep)

/**
 * realpath for paths that may not exist yet: the longest existing prefix is resolved by the OS, and a
 * dangling symlink on the way is followed by hand, so a new file below a link cannot land elsewhere.
 */
export async function realpathLoose(target: string, links = 0): Promise<string> {
  try {
    return await realpath(target)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error
  }
  const info = await lstat(target).catch(() => undefined)
  if (info?.isSymbolicLink()) {
    if (links >= MAX_LINKS) throw new WorkspaceError('PATH_LOOP', `"${path.basename(target)}" runs into a loop of symbolic links (more than ${MAX_LINKS}).`)
    const link = await readlink(target).catch((error) => {
      // EINVAL: no longer a link (another process swapped it back); resolve the path again, counted as a link.
      if ((error as NodeJS.ErrnoException).code === 'EINVAL' || (error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw error
    })
    return realpathLoose(link === undefined ? target : path.resolve(path.dirname(target), link), links + 1)
  }
  const parent = path.dirname(target)
  if (parent === target) return target
  return path.join(await realpathLoose(parent, links), path.basename(target))
}

export async function realRoot(root: string): Promise<string> {
  try {
    const real = await realpath(root)
    if (!(await stat(real)).isDirectory()) throw new Error('not a directory')
    return real
  } catch {
    throw new WorkspaceError('ROOT_NOT_FOUND', `The workspace root ${root} does not exist or is not a directory.`)
  }
}

/**
 * Resolves `input` (relative to the root, or absolute inside it) and refuses anything whose real
 * location is outside the root: `..` escapes, foreign absolute paths and symlinks pointing out.
 * The operations open the result with O_NOFOLLOW (see checked-io.ts), which closes the race for the
 * last component; a directory higher up swapped for a link after this check is not detected.
 */
export async function resolveInside(root: string, input: string): Promise<Resolved> {
  checkInput(input)
  const rootReal = await realRoot(root)
  const lexical = path.resolve(root, input || '.')
  // An absolute path may name the root either as configured or by its real path.
  const base = within(lexical, path.resolve(root)) ? path.resolve(root) : within(lexical, rootReal) ? rootReal : undefined
  if (!base) {
    throw new WorkspaceError('PATH_OUTSIDE_ROOT', `Path "${input}" is outside the workspace root (${root}). Use a path relative to the root, without ".." leaving it.`)
  }
  const relative = path.relative(base, lexical)
  const real = await realpathLoose(path.join(rootReal, relative)).catch((error) => fsError(error, relative || '.'))
  if (!within(real, rootReal)) {
    throw new WorkspaceError('PATH_OUTSIDE_ROOT', `Path "${input}" leads outside the workspace root (${root}) through a symbolic link; only files inside the root can be used.`)
  }
  return { real, shown: relative || '.', root: rootReal }
}
