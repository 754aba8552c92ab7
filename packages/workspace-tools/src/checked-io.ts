import { constants } from 'node:fs'
import { open, type FileHandle } from 'node:fs/promises'
import { WorkspaceError, fsError } from './errors.ts'

/**
 * `where` names the entry relative to its directory's descriptor (see walk.ts), which closes the
 * race for every directory on the way; the open closes it for the last component. Reads never
 * block on a FIFO (O_NONBLOCK), and no open follows a symbolic link there (O_NOFOLLOW): the path was
 * resolved and checked just before, so a link found now was swapped in since, by another process,
 * and may point outside the root.
 */
const READ = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK
const UPDATE = constants.O_RDWR | constants.O_NOFOLLOW | constants.O_NONBLOCK
const REPLACE = constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK

export async function openChecked(where: string, shown: string, mode: 'read' | 'update' | 'replace'): Promise<FileHandle> {
  try {
    return await open(where, mode === 'read' ? READ : mode === 'update' ? UPDATE : REPLACE, 0o666)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') {
      throw new WorkspaceError('PATH_OUTSIDE_ROOT', `"${shown}" became a symbolic link after it was checked; it was not followed.`)
    }
    return fsError(error, shown)
  }
}

/** Opens `where` and checks through the handle (not the path, which may change) that it is a regular file. */
export async function openRegularFile(where: string, shown: string, mode: 'read' | 'update') {
  const handle = await openChecked(where, shown, mode)
  try {
    const info = await handle.stat()
    if (info.isDirectory()) throw new WorkspaceError('IS_A_DIRECTORY', `"${shown}" is a directory; use list_dir to see its contents.`)
    if (!info.isFile()) throw new WorkspaceError('NOT_A_FILE', `"${shown}" is not a regular file.`)
    return { handle, info }
  } catch (error) {
    await handle.close()
    throw error
  }
}

/** Makes `content` the whole file, writing at explicit offsets: the handle's position may be past the end after a read. */
export async function overwrite(handle: FileHandle, content: string) {
  const bytes = Buffer.from(content)
  await handle.truncate(0)
  for (let offset = 0; offset < bytes.length;) offset += (await handle.write(bytes, offset, bytes.length - offset, offset)).bytesWritten
}

/** Replaces the whole content of `where` (created if missing), refusing anything but a regular file. */
export async function replaceFile(where: string, shown: string, content: string) {
  const handle = await openChecked(where, shown, 'replace')
  try {
    if (!(await handle.stat()).isFile()) throw new WorkspaceError('NOT_A_FILE', `"${shown}" is not a regular file.`)
    await overwrite(handle, content)
  } finally {
    await handle.close()
  }
}
