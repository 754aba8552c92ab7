import { describeError } from '@goalkeeper/kit'
import type { ReasoningBlock, Usage } from '@goalkeeper/session'
import type { FinishReason, ModelChunk, ModelError, ModelProvider, ModelRequest, ToolCall } from '@goalkeeper/model'

/** Everything one model call produced. */
export interface ModelReply {
  text: string
  reasoning: string
  /** Signed reasoning blocks the provider needs back with the history. */
  reasoningBlocks: ReasoningBlock[]
  toolCalls: ToolCall[]
  usage?: Usage
  /** Undefined when the call was aborted or the stream broke off without a `finish` chunk. */
  finish?: FinishReason
  /** Set for a `finish` with an error and for a provider that broke its contract (threw, no finish). */
  error?: ModelError
  aborted: boolean
}

const ABORTED = Symbol('aborted')

/** Who hears the streamed deltas of a call as they arrive (the loop's `agent/text-delta` and `agent/reasoning-delta`). */
export interface StreamListeners {
  text?(text: string): void
  reasoning?(text: string): void
}

/**
 * Reads a provider's stream to its `finish` chunk. An abort wins at once, even over a provider that ignores
 * its signal, so a cancel never waits on the network.
 */
export async function readModelStream(
  provider: ModelProvider,
  request: ModelRequest,
  signal: AbortSignal,
  listeners: StreamListeners,
): Promise<ModelReply> {
  const reply: ModelReply = { text: '', reasoning: '', reasoningBlocks: [], toolCalls: [], aborted: false }
  let onAbort!: () => void
  const aborted = new Promise<typeof ABORTED>((resolve) => { onAbort = () => resolve(ABORTED) })
  if (signal.aborted) onAbort()
  else signal.addEventListener('abort', onAbort, { once: true })
  let iterator: AsyncIterator<ModelChunk> | undefined
  try {
    iterator = provider.stream(request, signal)[Symbol.asyncIterator]()
    while (true) {
      const next = iterator.next()
      // The losing `next()` of a race must not become an unhandled rejection.
      next.catch(() => {})
      const result = await Promise.race([next, aborted])
      if (result === ABORTED) break
      if (result.done) break
      if (take(reply, result.value, listeners)) break
    }
  } catch (error) {
    if (!signal.aborted) reply.error = { code: 'INTERNAL', message: `model provider failed: ${describeError(error)}` }
  } finally {
    signal.removeEventListener('abort', onAbort)
  }
  if (signal.aborted) {
    reply.aborted = true
    reply.finish = undefined
    reply.error = undefined
    // Let a generator run its cleanup; do not wait for one that hangs.
    iterator?.return?.()?.catch(() => {})
  } else if (!reply.finish && !reply.error) {
    reply.error = { code: 'INTERNAL', message: 'model stream ended without a finish chunk' }
  } else if (reply.finish) {
    iterator?.return?.()?.catch(() => {})
  }
  if (reply.error && !reply.aborted) reply.finish = 'error'
  return reply
}

/**
 * Applies one chunk; returns true at the final chunk. Chunks are typed: each provider checks its own wire
 * (model-openai its SSE, the scripted provider its script). Unknown chunk types are ignored for forward
 * compatibility.
 */
function take(reply: ModelReply, chunk: ModelChunk, listeners: StreamListeners): boolean {
  switch (chunk.type) {
    case 'text':
      if (chunk.text) { reply.text += chunk.text; listeners.text?.(chunk.text) }
      return false
    case 'reasoning':
      if (chunk.text) { reply.reasoning += chunk.text; listeners.reasoning?.(chunk.text) }
      return false
    case 'reasoning-block':
      reply.reasoningBlocks.push(chunk.block)
      return false
    case 'tool-call':
      reply.toolCalls.push(withUniqueId(chunk.call, reply.toolCalls))
      return false
    case 'usage':
      reply.usage = chunk.usage
      return false
    case 'finish': {
      reply.finish = chunk.reason
      if (chunk.reason === 'error' || chunk.error) {
        const { code = 'INTERNAL', message = 'model call failed', retryAfterMs, contextLimit, requestTokens } = chunk.error ?? {}
        reply.error = {
          code, message,
          ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
          ...(contextLimit !== undefined ? { contextLimit } : {}),
          ...(requestTokens !== undefined ? { requestTokens } : {}),
        }
      }
      return true
    }
    default:
      return false
  }
}

/** Call ids must be unique within a step: a result is matched to its call by id. */
function withUniqueId(call: ToolCall, previous: ToolCall[]): ToolCall {
  let id = call.id || `call_${previous.length + 1}`
  while (previous.some((other) => other.id === id)) id += '_'
  return { id, name: call.name, arguments: call.arguments }
}
