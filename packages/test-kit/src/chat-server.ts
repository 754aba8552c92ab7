import { delta, frame, jsonError, startServer, startSse } from './openai-server.ts'

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
 * `answer` decides each request's reply from its parsed body and its size (one function for every request,
 * where `startServer` takes one handler per request).
 */
export async function startChatServer(answer: (request: ChatRequest, chars: number) => ChatAnswer | Promise<ChatAnswer>): Promise<ChatServer> {
  const requests: ChatServer['requests'] = []
  const server = await startServer([async (res, received) => {
    const body = received.body as ChatRequest
    const reply = await answer(body, received.chars)
    requests.push({ body, chars: received.chars, status: 'status' in reply ? reply.status : 200 })
    if ('status' in reply) return jsonError(reply.status, reply.body)(res, received)
    startSse(res)
    res.end(streamOf(reply))
  }])
  return { url: server.url, port: Number(new URL(server.url).port), requests, close: server.close }
}

let calls = 0

/** The SSE frames of one streamed answer. */
function streamOf(reply: { text?: string; toolCalls?: { name: string; arguments: Record<string, unknown> }[] }): string {
  const toolCalls = reply.toolCalls ?? []
  return [
    delta({ role: 'assistant', content: reply.text ?? '' }),
    ...toolCalls.map((call, index) => delta({ tool_calls: [{ index, id: `call_${++calls}`, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.arguments) } }] })),
    delta({}, toolCalls.length ? 'tool_calls' : 'stop'),
    frame('[DONE]'),
  ].join('')
}
