import { Readable } from 'node:stream'
import { ndJsonStream, type Stream } from '@agentclientprotocol/sdk'

/** Puts bytes on the output (stdout) and calls `done` once they are handed over. */
export type WriteBytes = (chunk: Uint8Array, done: (error?: Error | null) => void) => void

/**
 * An ACP stream over a process's stdin and stdout: newline-delimited JSON-RPC. `write` puts bytes on
 * stdout; a host that sends everything else written to stdout to stderr passes the original writer.
 */
export function stdioStream(input: NodeJS.ReadableStream, write: WriteBytes): Stream {
  const writable = new WritableStream<Uint8Array>({
    write: (chunk) => new Promise<void>((resolve, reject) => write(chunk, (error) => (error ? reject(error) : resolve()))),
  })
  const readable = Readable.toWeb(input as Readable) as unknown as ReadableStream<Uint8Array>
  return ndJsonStream(writable, readable)
}
