/** A failure with a stable code; the tool pipeline turns the thrown error into `{ ok: false, error: { code, message } }`. */
export class WorkspaceError extends Error {
  constructor(public code: string, message: string) {
    super(message)
    this.name = 'WorkspaceError'
  }
}

/** Node's errno codes for the cases a model hits, phrased as instructions. */
export function fsError(error: unknown, shown: string): never {
  const code = (error as NodeJS.ErrnoException)?.code
  if (code === 'ENOENT') throw new WorkspaceError('NOT_FOUND', `"${shown}" does not exist. Use list_dir or search to find the right path.`)
  if (code === 'ENOTDIR') throw new WorkspaceError('NOT_A_DIRECTORY', `A parent of "${shown}" is a file, not a directory.`)
  if (code === 'EISDIR') throw new WorkspaceError('IS_A_DIRECTORY', `"${shown}" is a directory.`)
  if (code === 'EACCES' || code === 'EPERM') throw new WorkspaceError('PERMISSION_DENIED', `Permission denied for "${shown}".`)
  if (code === 'ELOOP') throw new WorkspaceError('PATH_LOOP', `"${shown}" runs into a loop of symbolic links.`)
  if (code === 'ENAMETOOLONG') throw new WorkspaceError('INVALID_PATH', `"${shown}" is too long for the file system.`)
  // ENXIO: a FIFO or socket opened without blocking and nobody on the other end.
  if (code === 'ENXIO') throw new WorkspaceError('NOT_A_FILE', `"${shown}" is not a regular file.`)
  throw error
}
