import type { FinishReason, ModelChunk, ModelError } from '@goalkeeper/model'
import type { Usage } from '@goalkeeper/session'
import { ToolCallAssembler, type ToolCallDelta } from './tool-call-assembler.ts'
import { mapUsage } from './usage.ts'
import { failure, streamedFailure, truncate, type AttemptFailure } from './errors.ts'

interface WireChoice {
  index?: number
  delta?: {
    content?: string | null
    reasoning_content?: string | null
    /** vLLM, OpenRouter and newer Ollama name it this way. */
    reasoning?: string | null
    tool_calls?: ToolCallDelta[] | null
  } | null
  finish_reason?: string | null
}

export type DecodeResult =
  | { kind: 'chunks'; chunks: ModelChunk[] }
  | { kind: 'failed'; failure: AttemptFailure }

const FINISH_ERRORS: Record<string, ModelError['code']> = {
  content_filter: 'CONTENT_FILTER',
  insufficient_system_resource: 'SERVER',
}

/** Turns the `data` of each SSE event into model chunks. One decoder per HTTP attempt. */
export class StreamDecoder {
  private tools = new ToolCallAssembler()
  private usage: Usage | undefined
  private reason: string | undefined
  private emittedCalls = 0
  /** `[DONE]` arrived: nothing more is expected. */
  done = false

  constructor(private provider: string, private secret?: string) {}

  /** A finish reason arrived, so the answer is complete even if `[DONE]` never comes. */
  get finished(): boolean {
    return this.reason !== undefined
  }

  decode(data: string): DecodeResult {
    if (data.trim() === '[DONE]') {
      this.done = true
      return { kind: 'chunks', chunks: [] }
    }
    let frame: unknown
    try {
      frame = JSON.parse(data)
    } catch {
      const shown = truncate(data.replace(/\s+/g, ' '), 120)
      // Deterministic server output: retrying would most likely repeat it.
      return { kind: 'failed', failure: failure('SERVER', `${this.provider}: malformed stream frame (not JSON): ${shown}`, false) }
    }
    if (!frame || typeof frame !== 'object') return { kind: 'chunks', chunks: [] }
    const record = frame as { error?: unknown; usage?: unknown; choices?: WireChoice[] }
    if (record.error) return { kind: 'failed', failure: streamedFailure(this.provider, frame, this.secret) }

    const chunks: ModelChunk[] = []
    const usage = mapUsage(record.usage)
    // Servers with continuous usage stats send it on every frame; the last one is the total.
    if (usage) this.usage = usage
    for (const choice of record.choices ?? []) {
      if ((choice.index ?? 0) !== 0) continue
      const delta = choice.delta ?? {}
      const reasoning = delta.reasoning_content ?? delta.reasoning
      if (reasoning) chunks.push({ type: 'reasoning', text: reasoning })
      if (delta.content) chunks.push({ type: 'text', text: delta.content })
      for (const call of delta.tool_calls ?? []) this.tools.add(call)
      if (choice.finish_reason) {
        this.reason = choice.finish_reason
        chunks.push(...this.drainCalls())
      }
    }
    return { kind: 'chunks', chunks }
  }

  /** The closing chunks (late tool calls, usage, finish), or a failure when the answer is incomplete. */
  end(): DecodeResult {
    if (!this.done && !this.finished) {
      return { kind: 'failed', failure: failure('TRANSPORT', `${this.provider}: the stream ended before the answer was complete`) }
    }
    const chunks = this.drainCalls()
    if (this.usage) chunks.push({ type: 'usage', usage: this.usage })
    chunks.push(this.finish())
    return { kind: 'chunks', chunks }
  }

  private drainCalls(): ModelChunk[] {
    const calls = this.tools.drain()
    this.emittedCalls += calls.length
    return calls.map((call) => ({ type: 'tool-call', call }))
  }

  private finish(): ModelChunk {
    const reason = this.reason ?? 'stop'
    const errorCode = FINISH_ERRORS[reason]
    if (errorCode) {
      return { type: 'finish', reason: 'error', error: { code: errorCode, message: `${this.provider}: the answer was stopped (finish reason ${reason})` } }
    }
    if (reason === 'length') return { type: 'finish', reason: 'max-tokens' }
    let mapped: FinishReason = reason === 'tool_calls' || reason === 'function_call' ? 'tool-calls' : 'stop'
    // Some servers say `stop` although they returned tool calls; the calls are what matters.
    if (mapped === 'stop' && this.emittedCalls > 0) mapped = 'tool-calls'
    return { type: 'finish', reason: mapped }
  }
}
