// A local OpenAI-compatible chat-completions server for tests: the HTTP provider (model-openai) talks to it
// over a real socket, so packages that run a real model provider in their tests script the server, not the model.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach } from 'vitest'

export interface Received {
  at: number
  url: string
  headers: http.IncomingHttpHeaders
  body: any
  /** The body's length in characters, as sent. */
  chars: number
  /** Resolves when the server sees the connection of this request close. */
  closed: Promise<void>
}

export type Handler = (res: http.ServerResponse, received: Received) => void | Promise<void>

/** A local chat-completions server: request i is answered by handlers[i] (the last one repeats). */
export const startServer = async (handlers: Handler[]) => {
  const received: Received[] = []
  const server = http.createServer((req, res) => {
    let raw = ''
    req.setEncoding('utf8')
    req.on('data', (piece) => (raw += piece))
    req.on('end', () => {
      const closed = new Promise<void>((resolve) => res.on('close', () => resolve()))
      const entry: Received = { at: Date.now(), url: req.url ?? '', headers: req.headers, body: JSON.parse(raw), chars: raw.length, closed }
      received.push(entry)
      const handler = handlers[Math.min(received.length - 1, handlers.length - 1)]
      void Promise.resolve(handler(res, entry)).catch((error) => res.destroy(error))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/v1`,
    received,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
}

export const frame = (value: unknown): string => `data: ${typeof value === 'string' ? value : JSON.stringify(value)}\n\n`

export const delta = (d: Record<string, unknown>, finish: string | null = null) =>
  frame({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: d, finish_reason: finish }] })

export const usageFrame = (usage: Record<string, unknown>) => frame({ id: 'c1', choices: [], usage })

export const startSse = (res: http.ServerResponse) => {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
  res.flushHeaders()
}

/** Answers with the given SSE text in one write. */
export const sse = (...frames: string[]): Handler => (res) => {
  startSse(res)
  res.end(frames.join(''))
}

export const textReply = (text: string): Handler => sse(delta({ role: 'assistant', content: text }), delta({}, 'stop'), frame('[DONE]'))

export const jsonError = (status: number, body: unknown, headers: Record<string, string> = {}): Handler => (res) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers })
  res.end(typeof body === 'string' ? body : JSON.stringify(body))
}

export type OpenAIServer = Awaited<ReturnType<typeof startServer>>

/** A per-test server factory: call at the top of a test file; every server it started is closed after each test. */
export const useOpenAIServers = () => {
  const open: OpenAIServer[] = []
  afterEach(async () => {
    await Promise.all(open.splice(0).map((server) => server.close()))
  })
  return async (handlers: Handler[]): Promise<OpenAIServer> => {
    const server = await startServer(handlers)
    open.push(server)
    return server
  }
}
