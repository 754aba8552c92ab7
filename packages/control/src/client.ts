import { readFile } from 'node:fs/promises'
import { connect } from 'node:net'
import { isAlive, isRecord } from '@goalkeeper/kit'
import { controlDir, pointerFile } from './places.ts'
import { ControlError, type ControlReply, type ControlRequest } from './protocol.ts'

export interface ControlClientOptions {
  /** Default: `controlDir()`. */
  dir?: string
  /** Default 10 s: a process that does not answer in that time is reported, not waited for. */
  timeoutMs?: number
}

/** No process can take a control for this session here: `why` says so in words for a person. */
export class ControlUnavailable extends ControlError {}

async function holderOf(dir: string, session: string): Promise<{ pid: number; socket: string }> {
  let text: string
  try {
    text = await readFile(pointerFile(dir, session), 'utf8')
  } catch {
    throw new ControlUnavailable('CONTROL_NOT_HELD', `no goalkeeper process on this machine has session ${session} open: start it again (goalkeeper goal --session ${session}) to control it`)
  }
  let holder: unknown
  try {
    holder = JSON.parse(text)
  } catch {
    holder = undefined
  }
  if (!isRecord(holder) || !Number.isInteger(holder.pid) || typeof holder.socket !== 'string') throw new ControlUnavailable('CONTROL_NOT_HELD', `the note naming the process of session ${session} is unreadable`)
  return { pid: holder.pid as number, socket: holder.socket }
}

/**
 * Sends one control to the process that holds the session open and resolves to its reply (a refused control
 * is `ok: false` with the goal's error code and message). Throws `ControlUnavailable` when no live process holds it.
 */
export async function sendControl(request: ControlRequest, options: ControlClientOptions = {}): Promise<ControlReply> {
  const dir = options.dir ?? controlDir()
  const holder = await holderOf(dir, request.session)
  const gone = () => new ControlUnavailable('CONTROL_GONE', isAlive(holder.pid) ? `the process that had session ${request.session} open (pid ${holder.pid}) does not answer` : `the process that ran session ${request.session} (pid ${holder.pid}) is gone`)
  return new Promise<ControlReply>((resolve, reject) => {
    const socket = connect(holder.socket)
    let buffer = ''
    const fail = (error: Error) => {
      socket.destroy()
      reject(error)
    }
    socket.setTimeout(options.timeoutMs ?? 10_000, () => fail(gone()))
    socket.setEncoding('utf8')
    socket.on('error', () => fail(gone()))
    socket.on('connect', () => socket.write(`${JSON.stringify(request)}\n`))
    socket.on('data', (chunk: string) => {
      buffer += chunk
      const newline = buffer.indexOf('\n')
      if (newline < 0) return
      socket.end()
      try {
        resolve(JSON.parse(buffer.slice(0, newline)) as ControlReply)
      } catch {
        reject(new ControlError('CONTROL_FAILED', `process ${holder.pid} answered something that is not a control reply`))
      }
    })
    socket.on('end', () => fail(gone()))
  })
}
