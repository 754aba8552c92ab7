import { randomBytes } from 'node:crypto'
import { type FileHandle, link, open, unlink } from 'node:fs/promises'
import path from 'node:path'

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
  const temp = path.join(dir, `.${path.basename(file)}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`)
  const handle = await open(temp, 'wx')
  try {
    try {
      await handle.writeFile(content)
      await handle.sync()
    } finally {
      await handle.close()
    }
    await link(temp, file)
  } finally {
    await unlink(temp).catch(() => {})
  }
  await fsyncDir(dir)
}

/** Saves bytes cut from a session file next to it, under a name no other file has. */
export async function saveSideFile(file: string, bytes: Buffer, stamp: number): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    const side = `${file}.torn-${stamp}${attempt ? `-${attempt}` : ''}`
    try {
      await createFileExclusive(side, bytes)
      return side
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 100) throw error
    }
  }
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
