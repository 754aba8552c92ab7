import type { ContentBlock, ReasoningBlock, RecordedToolCall, Usage } from '@goalkeeper/session'

export type ModelErrorCode =
  | 'RATE_LIMIT' | 'QUOTA' | 'AUTH' | 'SERVER' | 'TRANSPORT' | 'BAD_REQUEST' | 'CONTEXT_OVERFLOW' | 'REFUSED' | 'INTERNAL'

/** `REFUSED`: the model declined to answer (OpenAI's `refusal`); the message says why. */
export const MODEL_ERROR_CODES: readonly ModelErrorCode[] = [
  'RATE_LIMIT', 'QUOTA', 'AUTH', 'SERVER', 'TRANSPORT', 'BAD_REQUEST', 'CONTEXT_OVERFLOW', 'REFUSED', 'INTERNAL',
]

export interface ModelError {
  code: ModelErrorCode | (string & {})
  message: string
  retryAfterMs?: number
  /**
   * CONTEXT_OVERFLOW only, when the refusal states them (in the server's own tokens): the limit it enforces
   * and what it counted for the refused request. The agent loop learns the effective limit from them.
   */
  contextLimit?: number
  requestTokens?: number
}

/** A complete tool call as the model produced it; `arguments` is the raw JSON text. */
export type ToolCall = RecordedToolCall

export type ModelMessage =
  | { role: 'user'; content: ContentBlock[] }
  /** `reasoningBlocks`: signed reasoning to send back verbatim (providers that do not need it ignore it). */
  | { role: 'assistant'; text: string; toolCalls: ToolCall[]; reasoning?: string; reasoningBlocks?: ReasoningBlock[] }
  | { role: 'tool'; callId: string; name: string; ok: boolean; content: string }

export interface ToolSchema {
  name: string
  description: string
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>
}

/**
 * A JSON Schema the model's final answer must satisfy (`goalkeeper run --output-schema`). Each provider asks
 * for it in its own way (OpenAI's `response_format`, or the system prompt where there is no such option); the
 * caller still validates the answer, since no way is a guarantee.
 */
export interface OutputSchema {
  /** A name for the schema, `^[A-Za-z0-9_-]{1,64}$` (OpenAI's `json_schema.name`). */
  name: string
  schema: Record<string, unknown>
}

export interface ModelRequest {
  /** Provider-specific model id; providers fall back to their configured one. */
  model?: string
  system?: string
  messages: ModelMessage[]
  tools: ToolSchema[]
  maxTokens?: number
  /** The answer in text must be one JSON value valid against this schema (tool calls stay free). */
  outputSchema?: OutputSchema
}

export type FinishReason = 'stop' | 'tool-calls' | 'max-tokens' | 'error'

export type ModelChunk =
  | { type: 'text'; text: string }
  | { type: 'reasoning'; text: string }
  /** A complete signed reasoning block (its text also came as `reasoning` chunks), recorded to be sent back. */
  | { type: 'reasoning-block'; block: ReasoningBlock }
  | { type: 'tool-call'; call: ToolCall }
  | { type: 'usage'; usage: Usage }
  | { type: 'finish'; reason: FinishReason; error?: ModelError }

export interface ModelProvider {
  /** Failures arrive as a `finish` chunk with an error, not as exceptions. */
  stream(request: ModelRequest, signal: AbortSignal): AsyncIterable<ModelChunk>
  /** What the provider is, for people (see ProviderDescription); without it `ctx.models.describe` gives the name. */
  describe?(): ProviderDescription
  /**
   * The context window of `model` (the provider's configured one when absent) in tokens, or undefined when
   * unknown. The agent loop compacts the history before a request would fill too much of it.
   */
  contextWindow?(model?: string): number | undefined
  /**
   * The exact input tokens `request` would take, from the provider's own counting (an endpoint, or its last
   * usage plus an estimate of what was added), or undefined when it cannot say. The agent loop's compaction
   * decision uses it, with its own estimate as the fallback. Never throws.
   */
  countTokens?(request: ModelRequest, signal: AbortSignal): Promise<number | undefined>
}

/**
 * What a provider says about itself, so that a person can tell whether work goes to a paid, remote model
 * or stays offline, and why. Never holds a secret: a host, not the base URL; a variable's name, not its value.
 */
export interface ProviderDescription {
  /** One line, e.g. `deepseek at api.deepseek.com, key from DEEPSEEK_API_KEY`, or `scripted (offline)`. */
  summary: string
  /** Requests never leave the process: no network, no cost (the scripted provider). */
  offline: boolean
  /** The host (and port) requests go to. */
  host?: string
  /** The environment variable the API key was read from, when it came from the environment. */
  keyEnv?: string
  /** Who serves the model, for price tables: `openai`, `deepseek`, or the provider's own name. */
  vendor?: string
  /** The model id requests name, e.g. `deepseek-chat`. */
  model?: string
}

/** A provider waits before it retries a failed request (emitted as `model/retry`, for front ends that show progress). */
export interface ModelRetryInfo {
  /** The retry about to be made, from 1. */
  attempt: number
  /** Retries allowed in all. */
  of: number
  waitMs: number
  /** The failure being retried. */
  error: ModelError
}

/**
 * Trouble with a response stream while it happens (emitted as `model/stream`), so a front end is never silent:
 * - `broken`: the stream failed after `frames` events had reached the caller; the provider does not retry
 *   (that would repeat output), and the text so far is cut off. The agent loop may call the model again.
 * - `stalled`: no data for `silentMs` so far; the provider gives up at `limitMs` of silence. Repeated at each
 *   multiple of the provider's notice interval while the silence lasts.
 */
export type ModelStreamNotice =
  | { kind: 'broken'; frames: number; error: ModelError }
  | { kind: 'stalled'; silentMs: number; limitMs: number }

/** A provider plugin that is loaded but registered nothing, and what would switch it on. */
export interface ProviderStandby {
  /** The name it would register. */
  name: string
  /** Why it is off, e.g. `DEEPSEEK_API_KEY is unset`. */
  reason: string
  /** Environment variables that, exported before start, switch on a real provider of this kind. */
  enableWith: string[]
}

export interface ModelService {
  /** Registers a provider under `name` (an effect: removed with the calling plugin or by the returned disposer). */
  register(name: string, provider: ModelProvider): () => void
  get(name: string): ModelProvider | undefined
  list(): string[]
  /** The first registered name of `preferences`, or undefined. */
  pick(preferences: readonly string[]): string | undefined
  /** What the provider registered as `name` says about itself (its name when it says nothing); undefined when none is. */
  describe(name: string): ProviderDescription | undefined
  /** Records a provider that is configured but off (an effect, like `register`); names need not be unique. */
  standby(name: string, standby: Omit<ProviderStandby, 'name'>): () => void
  /** The providers recorded as off, in the order they were recorded. */
  standbys(): ProviderStandby[]
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
  contextWindow(): number | undefined
  /** Sets (or, with undefined, clears) the context window the provider reports. */
  setContextWindow(tokens: number | undefined): void
}

export interface ScriptedOptions {
  /** Context window in tokens the provider reports (none by default: the agent loop then never compacts ahead). */
  contextWindow?: number
}
