import type { ModelMessage, ModelRequest } from '@goalkeeper/model'

/**
 * Token estimates without a tokenizer: about 4 characters per token, plus a few tokens of framing per
 * message. Tokenizers differ between providers and none is exact for all; this errs on the high side for
 * English and code, and the compaction threshold leaves room for the rest.
 */
export const CHARS_PER_TOKEN = 4
const MESSAGE_OVERHEAD = 4

export const estimateText = (text: string): number => Math.ceil(text.length / CHARS_PER_TOKEN)

/** Reasoning is not counted: providers do not send it back. */
export function estimateMessage(message: ModelMessage): number {
  switch (message.role) {
    case 'user':
      return MESSAGE_OVERHEAD + message.content.reduce((sum, block) => sum + estimateText(block.text ?? ''), 0)
    case 'assistant':
      return MESSAGE_OVERHEAD + estimateText(message.text) + message.toolCalls.reduce((sum, call) => sum + estimateText(call.name + call.arguments) + MESSAGE_OVERHEAD, 0)
    case 'tool':
      return MESSAGE_OVERHEAD + estimateText(message.content) + estimateText(message.name)
    default:
      return MESSAGE_OVERHEAD
  }
}

/** Everything of a request but its messages: the system prompt and the tool schemas. */
export const estimateFixed = (request: Pick<ModelRequest, 'system' | 'tools'>): number =>
  estimateText(request.system ?? '') + (request.tools.length ? estimateText(JSON.stringify(request.tools)) : 0)

export const estimateMessages = (messages: readonly ModelMessage[]): number => messages.reduce((sum, message) => sum + estimateMessage(message), 0)

export const estimateRequest = (request: ModelRequest): number => estimateFixed(request) + estimateMessages(request.messages)
