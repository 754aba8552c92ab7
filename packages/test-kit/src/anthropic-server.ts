// A local Messages API server that answers from the recorded streams in fixtures/, byte for byte, and keeps
// every request body as the bytes it received (so tests can check what went back to the API exactly).
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/anthropic')

/** A fixture file's bytes. */
export const fixture = (name: string): Buffer => readFileSync(path.join(FIXTURES, name))

export interface Received {
  at: number
  path: string
  headers: http.IncomingHttpHeaders
  /** The request body exactly as sent. */
  raw: string
  body: any
  /** Resolves when the server sees the connection of this request close. */
  closed: Promise<void>
}

export type Reply = (res: http.ServerResponse, received: Received) => void | Promise<void>

/** Streams a fixture (with `${NAME}` placeholders replaced by `fill`'s values, for templates). */
export const stream = (name: string, fill?: (received: Received) => Record<string, string>): Reply => (res, received) => {
  let bytes = fixture(name)
  if (fill) {
    const values = fill(received)
    bytes = Buffer.from(bytes.toString('utf8').replace(/\$\{(\w+)\}/g, (whole, key: string) => values[key] ?? whole))
  }
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'request-id': 'req_replay' })
  res.end(bytes)
}

/** An error response with a recorded body from fixtures/errors. */
export const error = (status: number, name: string, headers: Record<string, string> = {}): Reply => (res) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers })
  res.end(fixture(path.join('errors', name)))
}

/** Sends the fixture's bytes, then destroys the socket: a connection lost in the middle of the answer. */
export const cut = (name: string): Reply => (res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' })
  res.write(fixture(name), () => res.socket?.destroy())
}

/** The count-tokens endpoint's answer. */
export const counted = (inputTokens: number): Reply => (res) => {
  res.writeHead(200, { 'content-type': 'application/json' })
  res.end(JSON.stringify({ input_tokens: inputTokens }))
}

export interface ReplayServer {
  url: string
  port: number
  /** Requests to /v1/messages, in order. */
  messages: Received[]
  /** Requests to /v1/messages/count_tokens, in order. */
  counts: Received[]
  close(): Promise<void>
}

/**
 * Request i to /v1/messages is answered by replies[i] (the last one repeats); count-tokens requests by
 * `countReply` (404 when none).
 */
export async function startReplayServer(replies: Reply[], countReply?: Reply): Promise<ReplayServer> {
  const messages: Received[] = []
  const counts: Received[] = []
  const server = http.createServer((req, res) => {
    const pieces: Buffer[] = []
    req.on('data', (piece: Buffer) => pieces.push(piece))
    req.on('end', () => {
      const raw = Buffer.concat(pieces).toString('utf8')
      const closed = new Promise<void>((resolve) => res.on('close', () => resolve()))
      const received: Received = { at: Date.now(), path: req.url ?? '', headers: req.headers, raw, body: raw ? JSON.parse(raw) : undefined, closed }
      let reply: Reply | undefined
      if (received.path.startsWith('/v1/messages/count_tokens')) {
        counts.push(received)
        reply = countReply
      } else if (received.path.startsWith('/v1/messages')) {
        messages.push(received)
        reply = replies[Math.min(messages.length - 1, replies.length - 1)]
      }
      if (!reply) {
        res.writeHead(404, { 'content-type': 'application/json' })
        return void res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: `no reply for ${received.path}` } }))
      }
      void Promise.resolve(reply(res, received)).catch((failure) => res.destroy(failure))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    messages,
    counts,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
}

/** The content of each SSE event of a fixture, parsed: the tests' expectations come from the same bytes. */
export const eventsOf = (name: string): any[] =>
  fixture(name).toString('utf8').split('\n').filter((line) => line.startsWith('data: ')).map((line) => JSON.parse(line.slice(6)))

/** The thinking blocks a fixture streams, assembled from its deltas, in the API's own shape. */
export const thinkingBlocksOf = (name: string): any[] => {
  const open = new Map<number, any>()
  const done: any[] = []
  for (const event of eventsOf(name)) {
    if (event.type === 'content_block_start' && /thinking/.test(event.content_block.type)) open.set(event.index, { ...event.content_block })
    if (event.type === 'content_block_delta' && open.has(event.index)) {
      const block = open.get(event.index)
      if (event.delta.type === 'thinking_delta') block.thinking += event.delta.thinking
      if (event.delta.type === 'signature_delta') block.signature += event.delta.signature
    }
    if (event.type === 'content_block_stop' && open.has(event.index)) {
      done.push(open.get(event.index))
      open.delete(event.index)
    }
  }
  return done
}
