import { Readable, type Writable } from 'node:stream'
import { ndJsonStream, type Stream } from '@agentclientprotocol/sdk'

/**
 * An ACP stream over a process's stdin and stdout (newline-delimited JSON-RPC). `write` is the function
 * that puts bytes on stdout; a host that sends everything else on stdout to stderr passes the original.
 */
export function stdioStream(input: NodeJS.ReadableStream, output: Writable, write: (chunk: Uint8Array, done: (error?: Error | null) => void) => void = (chunk, done) => void output.write(chunk, done)): Stream {
  const writable = new WritableStream<Uint8Array>({
    write: (chunk) => new Promise<void>((resolve, reject) => write(chunk, (error) => (error ? reject(error) : resolve()))),
  })
  const readable = Readable.toWeb(input as Readable) as unknown as ReadableStream<Uint8Array>
  return ndJsonStream(writable, readable)
}
