import type { ContentBlock, RecordedToolCall, Usage } from '@goalkeeper/session'

export type ModelErrorCode =
  | 'RATE_LIMIT' | 'QUOTA' | 'AUTH' | 'SERVER' | 'TRANSPORT' | 'BAD_REQUEST' | 'CONTEXT_OVERFLOW' | 'INTERNAL'

export const MODEL_ERROR_CODES: readonly ModelErrorCode[] = [
  'RATE_LIMIT', 'QUOTA', 'AUTH', 'SERVER', 'TRANSPORT', 'BAD_REQUEST', 'CONTEXT_OVERFLOW', 'INTERNAL',
]

export interface ModelError {
  code: ModelErrorCode | (string & {})
  message: string
  retryAfterMs?: number
}

/** A complete tool call as the model produced it; `arguments` is the raw JSON text. */
export type ToolCall = RecordedToolCall

export type ModelMessage =
  | { role: 'user'; content: ContentBlock[] }
  | { role: 'assistant'; text: string; toolCalls: ToolCall[]; reasoning?: string }
  | { role: 'tool'; callId: string; name: string; ok: boolean; content: string }

export interface ToolSchema {
  name: string
  description: string
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>
}

export interface ModelRequest {
  /** Provider-specific model id; providers fall back to their configured one. */
  model?: string
  system?: string
  messages: ModelMessage[]
  tools: ToolSchema[]
  maxTokens?: number
}

export type FinishReason = 'stop' | 'tool-calls' | 'max-tokens' | 'error'

export type ModelChunk =
  | { type: 'text'; text: string }
  | { type: 'reasoning'; text: string }
  | { type: 'tool-call'; call: ToolCall }
  | { type: 'usage'; usage: Usage }
  | { type: 'finish'; reason: FinishReason; error?: ModelError }

export interface ModelProvider {
  /** Failures arrive as a `finish` chunk with an error, not as exceptions. */
  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelChunk>
}

export interface ModelService {
  /** Registers a provider under `name` (an effect: removed with the calling plugin or by the returned disposer). */
  register(name: string, provider: ModelProvider): () => void
  get(name: string): ModelProvider | undefined
  list(): string[]
  /** The first registered name of `preferences`, or undefined. */
  pick(preferences: readonly string[]): string | undefined
}

// The scripted provider (tests and the offline demo).

export interface ScriptToolCall {
  id?: string
  name: string
  /** An object is serialised with JSON.stringify; a string is passed through as is (to script malformed JSON). */
  arguments?: string | Record<string, unknown>
}

export type ScriptResponse =
  | { kind?: 'reply'; text?: string; reasoning?: string; toolCalls?: ScriptToolCall[]; usage?: Usage; delayMs?: number }
  | { kind: 'error'; code: ModelErrorCode | (string & {}); message?: string; retryAfterMs?: number; delayMs?: number; text?: string }
  | { kind: 'max-tokens'; text?: string; delayMs?: number }
  /** Never finishes on its own; ends with finish/error only when the request is aborted. */
  | { kind: 'hang'; text?: string }

export type ScriptStep = ScriptResponse | ((request: ModelRequest) => ScriptResponse | Promise<ScriptResponse>)

export interface ScriptedProvider extends ModelProvider {
  /** Every request received, in order (deep copies). */
  readonly requests: ModelRequest[]
  /** Steps not yet consumed. */
  readonly remaining: number
  push(...steps: ScriptStep[]): void
  /** Drops pending steps and recorded requests. */
  reset(steps?: ScriptStep[]): void
}
