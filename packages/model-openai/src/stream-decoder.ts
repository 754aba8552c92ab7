import { clip, isRecord, type Masker } from '@goalkeeper/kit'
import type { FinishReason, ModelChunk, ModelError } from '@goalkeeper/model'
import type { Usage } from '@goalkeeper/session'
import { MAX_TOOL_CALLS, MAX_TOOL_CALL_CHARS, ToolCallAssembler, type ToolCallDelta } from './tool-call-assembler.ts'
import { mapUsage } from './usage.ts'
import { excerpt, failure, streamedFailure, type AttemptFailure } from './errors.ts'

/** A non-empty string, or undefined: a server bug must not put numbers or objects into the answer. */
const text = (value: unknown) => (typeof value === 'string' && value ? value : undefined)
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : [])

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
  /** OpenAI's `refusal` text: the model declined; it becomes the answer and a REFUSED finish. */
  private refusal = ''
  /** `[DONE]` arrived: nothing more is expected. */
  done = false

  constructor(private provider: string, private masker: Masker) {}

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
      // Deterministic server output: retrying would most likely repeat it.
      return { kind: 'failed', failure: failure('SERVER', `${this.provider}: malformed stream frame (not JSON): ${excerpt(data, this.masker)}`, false) }
    }
    if (!isRecord(frame)) return { kind: 'chunks', chunks: [] }
    if (frame.error) return { kind: 'failed', failure: streamedFailure(this.provider, frame, this.masker) }

    const chunks: ModelChunk[] = []
    const usage = mapUsage(frame.usage)
    // Servers with continuous usage stats send it on every frame; the last one is the total.
    if (usage) this.usage = usage
    // Fields of the wrong type are skipped one by one, so one bad field does not cost the answer.
    for (const choice of list(frame.choices)) {
      if (!isRecord(choice) || (choice.index ?? 0) !== 0) continue
      const delta = isRecord(choice.delta) ? choice.delta : {}
      // `reasoning_content` is DeepSeek's; vLLM, OpenRouter and newer Ollama say `reasoning`.
      const reasoning = text(delta.reasoning_content) ?? text(delta.reasoning)
      if (reasoning) chunks.push({ type: 'reasoning', text: reasoning })
      const content = text(delta.content)
      if (content) chunks.push({ type: 'text', text: content })
      const refusal = text(delta.refusal)
      if (refusal) {
        // Said once, then streamed: the answer must not read as an empty success.
        if (!this.refusal) chunks.push({ type: 'text', text: 'The model refused to answer: ' })
        this.refusal += refusal
        chunks.push({ type: 'text', text: refusal })
      }
      for (const call of list(delta.tool_calls)) {
        if (isRecord(call) && !this.tools.add(call as ToolCallDelta)) {
          return { kind: 'failed', failure: failure('SERVER', `${this.provider}: the tool calls exceeded ${MAX_TOOL_CALLS} calls or ${MAX_TOOL_CALL_CHARS / 1024 / 1024} MiB`, false) }
        }
      }
      const reason = text(choice.finish_reason)
      if (reason) {
        this.reason = reason
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
    if (this.refusal) {
      return { type: 'finish', reason: 'error', error: { code: 'REFUSED', message: `${this.provider}: the model refused: ${clip(this.refusal.replace(/\s+/g, ' ').trim(), 300)}` } }
    }
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
