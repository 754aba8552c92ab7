import type { ModelMessage, ModelRequest } from '@goalkeeper/model'
import type { ProviderSettings } from './config.ts'
import { outputFormat } from './output-format.ts'

type WireMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: WireToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string }

interface WireToolCall {
  id: string
  type: 'function'
  function: { name: string; arguments: string }
}

const toWire = (message: ModelMessage): WireMessage => {
  switch (message.role) {
    case 'user':
      // Plain string content is the one form every compatible server accepts.
      return { role: 'user', content: message.content.map((block) => block.text).join('\n\n') }
    case 'assistant': {
      // `reasoning` is deliberately not sent back: DeepSeek rejects it and it only costs tokens.
      if (!message.toolCalls.length) return { role: 'assistant', content: message.text }
      return {
        role: 'assistant',
        content: message.text || null,
        tool_calls: message.toolCalls.map((call) => ({
          id: call.id,
          type: 'function',
          // Chat templates of local servers parse the history's arguments; an empty string breaks them.
          function: { name: call.name, arguments: call.arguments || '{}' },
        })),
      }
    }
    case 'tool':
      return { role: 'tool', tool_call_id: message.callId, content: message.content }
    default:
      throw new TypeError(`unsupported message role ${JSON.stringify((message as { role?: unknown }).role)}`)
  }
}

export const buildRequestBody = (request: ModelRequest, settings: ProviderSettings): Record<string, unknown> => {
  const messages: WireMessage[] = []
  const format = request.outputSchema && outputFormat(request.outputSchema, settings.structuredOutput)
  const system = [request.system, format?.instruction].filter(Boolean).join('\n\n')
  if (system) messages.push({ role: 'system', content: system })
  for (const message of request.messages) messages.push(toWire(message))

  const body: Record<string, unknown> = {
    model: request.model || settings.model,
    messages,
    stream: true,
  }
  if (settings.streamUsage) body.stream_options = { include_usage: true }
  // Some servers refuse an empty tools array.
  if (request.tools.length) {
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    }))
  }
  const maxTokens = request.maxTokens ?? settings.maxTokens
  if (maxTokens !== undefined) body[settings.maxTokensField] = maxTokens
  if (settings.temperature !== undefined) body.temperature = settings.temperature
  if (format?.responseFormat) body.response_format = format.responseFormat
  return body
}
