import http from 'node:http'
import type { AddressInfo } from 'node:net'

/** A chat-completions request as the server received it (the parsed JSON body). */
export interface ChatRequest {
  model?: string
  messages: { role: string; content?: string | null; tool_calls?: { id: string; function: { name: string; arguments: string } }[]; tool_call_id?: string }[]
  tools?: unknown[]
  [key: string]: unknown
}

/** What the server answers: a streamed reply (text and tool calls), or an HTTP error with a JSON (or text) body. */
export type ChatAnswer =
  | { text?: string; toolCalls?: { name: string; arguments: Record<string, unknown> }[] }
  | { status: number; body: unknown }

export interface ChatServer {
  /** The base URL (`.../v1`) for model-openai's `baseUrl`. */
  url: string
  port: number
  /** Every request body, in order, with its size in characters and the status it was answered with. */
  requests: { body: ChatRequest; chars: number; status: number }[]
  close(): Promise<void>
}

/**
 * A local OpenAI-compatible chat-completions server for tests that drive the real model-openai provider:
 * `answer` decides each request's reply from its parsed body and its size.
 */
export async function startChatServer(answer: (request: ChatRequest, chars: number) => ChatAnswer | Promise<ChatAnswer>): Promise<ChatServer> {
  const requests: ChatServer['requests'] = []
  const server = http.createServer((req, res) => {
    let raw = ''
    req.setEncoding('utf8')
    req.on('data', (piece) => (raw += piece))
    req.on('end', () => {
      const body = JSON.parse(raw) as ChatRequest
      void Promise.resolve(answer(body, raw.length)).then((reply) => {
        if ('status' in reply) {
          requests.push({ body, chars: raw.length, status: reply.status })
          res.writeHead(reply.status, { 'content-type': 'application/json' })
          return void res.end(typeof reply.body === 'string' ? reply.body : JSON.stringify(reply.body))
        }
        requests.push({ body, chars: raw.length, status: 200 })
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        res.end(streamOf(reply))
      }).catch((error) => res.destroy(error))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
}

let calls = 0

/** The SSE frames of one streamed answer. */
function streamOf(reply: { text?: string; toolCalls?: { name: string; arguments: Record<string, unknown> }[] }): string {
  const frame = (delta: object, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
  const toolCalls = reply.toolCalls ?? []
  return [
    frame({ role: 'assistant', content: reply.text ?? '' }),
    ...toolCalls.map((call, index) => frame({ tool_calls: [{ index, id: `call_${++calls}`, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.arguments) } }] })),
    frame({}, toolCalls.length ? 'tool_calls' : 'stop'),
    'data: [DONE]\n\n',
  ].join('')
}
