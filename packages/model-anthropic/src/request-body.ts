import { outputSchemaInstruction, type ModelMessage, type ModelRequest } from '@goalkeeper/model'
import type { ReasoningBlock } from '@goalkeeper/session'
import { maxTokensFor, type ProviderSettings } from './config.ts'

export interface CacheControl { type: 'ephemeral' }

export type WireBlock =
  | { type: 'text'; text: string; cache_control?: CacheControl }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown>; cache_control?: CacheControl }
  | { type: 'tool_result'; tool_use_id: string; content: string; is_error?: true; cache_control?: CacheControl }
  | ReasoningBlock

export interface WireMessage { role: 'user' | 'assistant'; content: WireBlock[] }

export interface WireTool { name: string; description: string; input_schema: Record<string, unknown>; cache_control?: CacheControl }

export interface RequestBody {
  model: string
  max_tokens: number
  system?: { type: 'text'; text: string; cache_control?: CacheControl }[]
  messages: WireMessage[]
  tools?: WireTool[]
  thinking?: { type: 'enabled'; budget_tokens: number }
  temperature?: number
}

/** Room for the answer beside the thinking budget, when the configured limit leaves none (the API needs max_tokens > budget). */
const ANSWER_ROOM = 4096

/** The API allows four breakpoints; the prompt uses at most three. */
const EPHEMERAL: CacheControl = { type: 'ephemeral' }

/** The object a call's raw JSON arguments stand for; the API takes only objects, so anything else is sent as `{}`. */
export const inputOf = (text: string): Record<string, unknown> => {
  try {
    const value = JSON.parse(text || '{}') as unknown
    return value && typeof value === 'object' && !Array.isArray(value) ? value as Record<string, unknown> : {}
  } catch {
    return {}
  }
}

const blocksOf = (message: ModelMessage): WireBlock[] => {
  switch (message.role) {
    case 'user':
      // The API refuses empty text blocks.
      return message.content.filter((block) => block.text).map((block) => ({ type: 'text', text: block.text }))
    case 'assistant':
      return [
        // Signed blocks go back first and unchanged, or the API refuses the tool results that follow.
        ...(message.reasoningBlocks ?? []),
        ...(message.text ? [{ type: 'text' as const, text: message.text }] : []),
        ...message.toolCalls.map((call) => ({ type: 'tool_use' as const, id: call.id, name: call.name, input: inputOf(call.arguments) })),
      ]
    case 'tool':
      return [{ type: 'tool_result', tool_use_id: message.callId, content: message.content, ...(message.ok ? {} : { is_error: true as const }) }]
    default:
      throw new TypeError(`unsupported message role ${JSON.stringify((message as { role?: unknown }).role)}`)
  }
}

/**
 * The history as Messages API turns: tool results are user content, and consecutive messages of one role are
 * one turn (tool results of parallel calls, and a steered hint after them, in one user turn with the results first).
 */
export const toWireMessages = (messages: readonly ModelMessage[]): WireMessage[] => {
  const turns: WireMessage[] = []
  for (const message of messages) {
    const role = message.role === 'assistant' ? 'assistant' : 'user'
    const content = blocksOf(message)
    if (!content.length) continue
    const last = turns[turns.length - 1]
    if (last?.role === role) last.content.push(...content)
    else turns.push({ role, content })
  }
  return turns
}

/**
 * Cache breakpoints: the system prompt (so tools and system, which precede it), the end of the history (what the
 * next request starts with), and the end of the previous request's history, where the last write lies, so a
 * step that adds many blocks still reads the cache. Computed from the messages of each request, so they move
 * forward as the history grows and are placed again after a compaction.
 */
export const placeBreakpoints = (body: RequestBody) => {
  if (body.system?.length) body.system[body.system.length - 1].cache_control = EPHEMERAL
  else if (body.tools?.length) body.tools[body.tools.length - 1].cache_control = EPHEMERAL
  const ends = new Set<number>()
  const { messages } = body
  if (messages.length) ends.add(messages.length - 1)
  let lastAssistant = -1
  for (let index = messages.length - 1; index >= 0; index--) if (messages[index].role === 'assistant') { lastAssistant = index; break }
  if (lastAssistant > 0) ends.add(lastAssistant - 1)
  for (const index of ends) {
    const content = messages[index].content
    // Thinking blocks take no cache_control: mark the last block that can.
    for (let at = content.length - 1; at >= 0; at--) {
      const block = content[at]
      if (block.type === 'text' || block.type === 'tool_use' || block.type === 'tool_result') {
        block.cache_control = EPHEMERAL
        break
      }
    }
  }
}

export const buildRequestBody = (request: ModelRequest, settings: ProviderSettings): RequestBody => {
  const model = request.model || settings.model
  let maxTokens = maxTokensFor(settings, model, request.maxTokens)
  const body: RequestBody = { model, max_tokens: maxTokens, messages: toWireMessages(request.messages) }
  if (request.system) body.system = [{ type: 'text', text: request.system }]
  // No JSON Schema option in the Messages API: the schema is asked for in the system prompt (README, Decisions).
  if (request.outputSchema) body.system = [...body.system ?? [], { type: 'text', text: outputSchemaInstruction(request.outputSchema) }]
  if (request.tools.length) {
    body.tools = request.tools.map((tool) => ({ name: tool.name, description: tool.description, input_schema: tool.parameters }))
  }
  if (settings.thinkingBudget) {
    if (maxTokens <= settings.thinkingBudget) body.max_tokens = maxTokens = settings.thinkingBudget + ANSWER_ROOM
    body.thinking = { type: 'enabled', budget_tokens: settings.thinkingBudget }
  } else if (settings.temperature !== undefined) {
    body.temperature = settings.temperature
  }
  if (settings.cache) placeBreakpoints(body)
  return body
}
