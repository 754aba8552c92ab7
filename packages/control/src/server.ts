import { chmod, lstat, mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises'
import { createServer, type Server, type Socket } from 'node:net'
import { describeError } from '@goalkeeper/kit'
import { pointerFile, socketFile } from './places.ts'
import { ControlError, type ControlReply, parseRequest, type ControlRequest, type ControlStatus } from './protocol.ts'

/** A request line longer than this is not a control: the connection is closed. */
export const MAX_LINE_BYTES = 64 * 1024

export interface ControlServer {
  socket: string
  /** Names this process as the holder of `session` (its pointer file). */
  hold(session: string): Promise<void>
  /** Removes the pointer, unless another process holds the session now. */
  release(session: string): Promise<void>
  close(): Promise<void>
}

/** The directory is this user's alone: one of another owner, or open to others, is refused. */
async function ownDir(dir: string) {
  await mkdir(dir, { recursive: true, mode: 0o700 })
  const info = await lstat(dir)
  if (!info.isDirectory() || (process.getuid && info.uid !== process.getuid())) throw new ControlError('CONTROL_DIR', `${dir} is not a directory of this user: controls are off`)
  if (info.mode & 0o077) await chmod(dir, 0o700)
}

function serve(connection: Socket, handle: (request: ControlRequest) => ControlStatus) {
  let buffer = ''
  connection.setEncoding('utf8')
  connection.on('error', () => connection.destroy())
  connection.on('data', (chunk: string) => {
    buffer += chunk
    if (Buffer.byteLength(buffer) > MAX_LINE_BYTES && !buffer.includes('\n')) return void connection.destroy()
    let newline
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, newline)
      buffer = buffer.slice(newline + 1)
      connection.write(`${JSON.stringify(replyTo(line, handle))}\n`)
    }
  })
}

function replyTo(line: string, handle: (request: ControlRequest) => ControlStatus): ControlReply {
  try {
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch {
      throw new ControlError('CONTROL_BAD_REQUEST', 'a control request is one line of JSON')
    }
    return { ok: true, status: handle(parseRequest(value)) }
  } catch (error) {
    const code = typeof (error as { code?: unknown }).code === 'string' ? (error as { code: string }).code : 'CONTROL_FAILED'
    return { ok: false, code, message: error instanceof Error ? error.message : describeError(error) }
  }
}

/**
 * Serves this process's control socket (`<dir>/<pid>.sock`, mode 0600) and writes a pointer file per session
 * it holds (`<dir>/<session>.json`, `{ pid, socket }`), so a controller finds the process from the id alone.
 */
export async function startControlServer(dir: string, handle: (request: ControlRequest) => ControlStatus): Promise<ControlServer> {
  await ownDir(dir)
  const socket = socketFile(dir, process.pid)
  // Left by an earlier process with this pid, which cannot be listening any more.
  await unlink(socket).catch(() => {})
  const server: Server = createServer((connection) => serve(connection, handle))
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(socket, () => {
      server.off('error', reject)
      resolve()
    })
  })
  await chmod(socket, 0o600)
  const held = new Set<string>()
  const pointer = JSON.stringify({ pid: process.pid, socket })
  return {
    socket,
    async hold(session) {
      held.add(session)
      const file = pointerFile(dir, session)
      const temp = `${file}.${process.pid}.tmp`
      await writeFile(temp, pointer, { mode: 0o600 })
      await rename(temp, file)
    },
    async release(session) {
      held.delete(session)
      await removePointer(dir, session)
    },
    async close() {
      await Promise.all([...held].map((session) => removePointer(dir, session)))
      held.clear()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await unlink(socket).catch(() => {})
    },
  }
}

async function removePointer(dir: string, session: string) {
  const file = pointerFile(dir, session)
  const text = await readFile(file, 'utf8').catch(() => '')
  // A later process that resumed the session wrote its own pointer: that one stays.
  let holder: unknown
  try {
    holder = JSON.parse(text)
  } catch {
    return
  }
  if ((holder as { pid?: unknown } | null)?.pid === process.pid) await unlink(file).catch(() => {})
}
