import { clip, isRecord } from '@goalkeeper/kit'
import type { ModelChunk, ModelError } from '@goalkeeper/model'
import type { ReasoningBlock } from '@goalkeeper/session'
import { inputOf, type WireBlock } from './request-body.ts'
import { mergeUsage, type WireUsage } from './usage.ts'

/** Bounds memory against a server that streams one block forever; far beyond any real answer. */
export const MAX_BLOCK_CHARS = 8 * 1024 * 1024

type Open =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; json: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'other' }

const str = (value: unknown): string => (typeof value === 'string' ? value : '')

export type StopReason = 'end_turn' | 'stop_sequence' | 'tool_use' | 'max_tokens' | 'refusal' | 'pause_turn' | (string & {})

/**
 * Turns the Messages API's stream events of one HTTP response into model chunks: text and thinking deltas as
 * they come, a tool call and a signed reasoning block whole at their block's stop. It also keeps the finished
 * blocks in wire form, in order, for a `pause_turn` continuation.
 */
export class StreamDecoder {
  private open = new Map<number, Open>()
  /** Finished content blocks as the API would take them back. */
  readonly content: WireBlock[] = []
  usage: WireUsage = {}
  stopReason: StopReason | undefined
  stopped = false
  started = false
  toolCalls = 0

  constructor(private provider: string) {}

  /** The chunks of one event, or a failure for a stream that breaks its own protocol. */
  decode(event: unknown): ModelChunk[] | ModelError {
    if (!isRecord(event)) return []
    switch (event.type) {
      case 'message_start': {
        this.started = true
        const message = isRecord(event.message) ? event.message : {}
        this.usage = mergeUsage(this.usage, message.usage)
        return []
      }
      case 'content_block_start': {
        const block = isRecord(event.content_block) ? event.content_block : {}
        const index = Number(event.index)
        switch (block.type) {
          case 'text':
            this.open.set(index, { type: 'text', text: str(block.text) })
            return str(block.text) ? [{ type: 'text', text: str(block.text) }] : []
          case 'tool_use':
            // `input` is `{}` at the start; the arguments arrive as input_json_delta fragments.
            this.open.set(index, { type: 'tool_use', id: str(block.id), name: str(block.name), json: '' })
            return []
          case 'thinking':
            this.open.set(index, { type: 'thinking', thinking: str(block.thinking), signature: str(block.signature) })
            return []
          case 'redacted_thinking':
            this.open.set(index, { type: 'redacted_thinking', data: str(block.data) })
            return []
          default:
            this.open.set(index, { type: 'other' })
            return []
        }
      }
      case 'content_block_delta':
        return this.delta(Number(event.index), isRecord(event.delta) ? event.delta : {})
      case 'content_block_stop':
        return this.close(Number(event.index))
      case 'message_delta': {
        const delta = isRecord(event.delta) ? event.delta : {}
        if (typeof delta.stop_reason === 'string') this.stopReason = delta.stop_reason
        this.usage = mergeUsage(this.usage, event.usage)
        return []
      }
      case 'message_stop':
        this.stopped = true
        return []
      default:
        // ping, and event types added later
        return []
    }
  }

  private delta(index: number, delta: Record<string, unknown>): ModelChunk[] | ModelError {
    const block = this.open.get(index)
    if (!block) return []
    let added = 0
    const chunks: ModelChunk[] = []
    if (delta.type === 'text_delta' && block.type === 'text') {
      const text = str(delta.text)
      block.text += text
      added = text.length
      if (text) chunks.push({ type: 'text', text })
    } else if (delta.type === 'input_json_delta' && block.type === 'tool_use') {
      block.json += str(delta.partial_json)
      added = block.json.length
    } else if (delta.type === 'thinking_delta' && block.type === 'thinking') {
      const text = str(delta.thinking)
      block.thinking += text
      added = block.thinking.length
      if (text) chunks.push({ type: 'reasoning', text })
    } else if (delta.type === 'signature_delta' && block.type === 'thinking') {
      block.signature += str(delta.signature)
    }
    const size = block.type === 'text' ? block.text.length : block.type === 'tool_use' ? block.json.length : block.type === 'thinking' ? block.thinking.length : 0
    if (added && size > MAX_BLOCK_CHARS) {
      return { code: 'SERVER', message: `${this.provider}: a content block exceeded ${MAX_BLOCK_CHARS / 1024 / 1024} MiB` }
    }
    return chunks
  }

  private close(index: number): ModelChunk[] {
    const block = this.open.get(index)
    this.open.delete(index)
    if (!block) return []
    switch (block.type) {
      case 'text':
        if (block.text) this.content.push({ type: 'text', text: block.text })
        return []
      case 'tool_use': {
        this.toolCalls++
        const args = block.json || '{}'
        this.content.push({ type: 'tool_use', id: block.id, name: block.name, input: inputOf(args) })
        return [{ type: 'tool-call', call: { id: block.id, name: block.name, arguments: args } }]
      }
      case 'thinking':
      case 'redacted_thinking': {
        const reasoning: ReasoningBlock = block.type === 'thinking'
          ? { type: 'thinking', thinking: block.thinking, signature: block.signature }
          : { type: 'redacted_thinking', data: block.data }
        this.content.push(reasoning)
        return [{ type: 'reasoning-block', block: reasoning }]
      }
      default:
        return []
    }
  }

  /** The model declined (`refusal`): what it said, for the error message. */
  refusal(): string {
    const said = this.content.filter((block) => block.type === 'text').map((block) => (block as { text: string }).text).join(' ')
    return clip(said.replace(/\s+/g, ' ').trim(), 300)
  }
}
