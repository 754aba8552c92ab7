import type { ProviderDescription } from '@goalkeeper/model'
import Schema from 'schemastery'
import { createMasker, type Masker } from '@goalkeeper/kit'

export type PresetName = 'deepseek' | 'openai' | 'custom'

/**
 * How a request's `outputSchema` is asked for: `json_schema` (OpenAI's structured outputs, which vLLM,
 * llama.cpp and Ollama also take), `json_object` (JSON mode: JSON promised, the schema only in the system
 * prompt; DeepSeek has no more), `prompt` (the system prompt alone, for servers that take neither).
 */
export type StructuredOutput = 'json_schema' | 'json_object' | 'prompt'

export interface Preset {
  name: string
  baseUrl?: string
  model?: string
  /** Environment variable holding the key; undefined when the endpoint needs no key. */
  apiKeyEnv?: string
  /** Newer OpenAI models refuse `max_tokens`; compatible servers only know `max_tokens`. */
  maxTokensField: 'max_tokens' | 'max_completion_tokens'
  /** Context window of the preset's default model in tokens (deepseek-chat and gpt-4o-mini: 128K). */
  contextWindow?: number
  structuredOutput: StructuredOutput
}

export const PRESETS: Record<PresetName, Preset> = {
  deepseek: { name: 'deepseek', baseUrl: 'https://api.deepseek.com', model: 'deepseek-chat', apiKeyEnv: 'DEEPSEEK_API_KEY', maxTokensField: 'max_tokens', contextWindow: 128_000, structuredOutput: 'json_object' },
  openai: { name: 'openai', baseUrl: 'https://api.openai.com/v1', model: 'gpt-4o-mini', apiKeyEnv: 'OPENAI_API_KEY', maxTokensField: 'max_completion_tokens', contextWindow: 128_000, structuredOutput: 'json_schema' },
  custom: { name: 'openai-compatible', maxTokensField: 'max_tokens', structuredOutput: 'json_schema' },
}

/** The variables the presets read their key from, in preset order. */
export const PRESET_KEY_VARIABLES: readonly string[] = Object.values(PRESETS).flatMap((preset) => (preset.apiKeyEnv ? [preset.apiKeyEnv] : []))

export const Config = Schema.object({
  preset: Schema.union(['deepseek', 'openai', 'custom'] as const).default('deepseek')
    .description('Endpoint defaults: deepseek, openai, or custom (a local or self-hosted server).'),
  name: Schema.string().description('Provider name in ctx.models (default: the preset name; `openai-compatible` for custom).'),
  baseUrl: Schema.string().description('API base URL; `/chat/completions` is appended. Required for the custom preset.'),
  apiKey: Schema.string().role('secret').description('API key. When omitted it is read from the environment at load time.'),
  apiKeyEnv: Schema.string().description('Environment variable holding the key (default: the preset\'s).'),
  model: Schema.string().description('Model id (default: the preset\'s). Required for the custom preset.'),
  contextWindow: Schema.natural().min(1).description('Context window of the model in tokens (default: the preset\'s for its own model; unknown for custom or another model). The agent loop compacts the history before it fills.'),
  maxTokens: Schema.natural().description('Default completion token limit; a request\'s own limit wins.'),
  temperature: Schema.number().min(0).max(2).description('Sampling temperature (server default when omitted).'),
  requestTimeoutMs: Schema.natural().min(1).default(60_000).description('Longest wait for the response headers.'),
  idleTimeoutMs: Schema.natural().min(1).default(90_000).description('Longest gap between two reads of the response body.'),
  stallNoticeMs: Schema.natural().default(30_000).description('Say so (`model/stream` stalled) after this long without data from a response body, and again at each multiple; 0 turns it off.'),
  maxRetries: Schema.natural().default(3).description('Retries of a failed request before any output (429, 5xx, transport).'),
  baseDelayMs: Schema.natural().default(500).description('First backoff delay; doubles each retry, with jitter.'),
  maxDelayMs: Schema.natural().default(30_000).description('Cap of a backoff delay and of an honoured Retry-After.'),
  headers: Schema.dict(Schema.string()).default({}).description('Extra request headers.'),
  streamUsage: Schema.boolean().default(true).description('Ask for a usage frame (`stream_options.include_usage`); turn off for servers that reject it.'),
  structuredOutput: Schema.union(['json_schema', 'json_object', 'prompt'] as const)
    .description('How an answer in a JSON Schema (`--output-schema`) is asked for: `json_schema` (response_format, the default of openai and custom), `json_object` (JSON mode plus the schema in the system prompt, the default of deepseek) or `prompt` (the system prompt only).'),
})

export type Config = Schemastery.TypeT<typeof Config>

/** Everything the provider needs, resolved once at load time. */
export interface ProviderSettings {
  name: string
  /** For price tables: the preset (`deepseek`, `openai`), or the provider's name for a custom server. */
  vendor: string
  url: string
  /** The host only, for error messages: a base URL may carry credentials. */
  host: string
  model: string
  apiKey?: string
  /** The environment variable `apiKey` was read from; unset when it came from the config (or there is none). */
  apiKeyEnv?: string
  /** Context window in tokens of `model`, when known. */
  contextWindow?: number
  maxTokens?: number
  maxTokensField: Preset['maxTokensField']
  temperature?: number
  requestTimeoutMs: number
  idleTimeoutMs: number
  stallNoticeMs: number
  maxRetries: number
  baseDelayMs: number
  maxDelayMs: number
  headers: Record<string, string>
  streamUsage: boolean
  structuredOutput: StructuredOutput
}

/** Header values this short (`x-team: core`) are not secrets, and masking them would mangle messages. */
const MIN_SECRET_HEADER_CHARS = 8

/**
 * Masks what must never appear in an error or a log line: the key, long configured header values, and
 * whatever the project's secret rule masks (secrets of the environment, `sk-` keys, URL user info, bearer tokens).
 */
export const maskerFor = (settings: ProviderSettings): Masker => createMasker({
  values: [
    ...(settings.apiKey ? [settings.apiKey] : []),
    ...Object.values(settings.headers).filter((value) => value.length >= MIN_SECRET_HEADER_CHARS),
  ],
})

export type Resolution =
  | { kind: 'on'; settings: ProviderSettings }
  | { kind: 'off'; name: string; reason: string }

export class ConfigError extends Error {
  override name = 'ConfigError'
}

export const resolveSettings = (config: Config, env: NodeJS.ProcessEnv): Resolution => {
  const preset = PRESETS[config.preset]
  const name = config.name || preset.name
  const baseUrl = config.baseUrl || preset.baseUrl
  if (!baseUrl) throw new ConfigError(`model-openai (${name}): the ${config.preset} preset needs \`baseUrl\``)
  const model = config.model || preset.model
  if (!model) throw new ConfigError(`model-openai (${name}): the ${config.preset} preset needs \`model\``)
  let parsed: URL
  try {
    parsed = new URL(baseUrl)
  } catch {
    throw new ConfigError(`model-openai (${name}): \`baseUrl\` is not a URL`)
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ConfigError(`model-openai (${name}): \`baseUrl\` must be http or https`)
  }
  // fetch refuses such URLs and quotes them whole in its error; the credentials would reach logs and sessions.
  if (parsed.username || parsed.password) {
    throw new ConfigError(`model-openai (${name}): \`baseUrl\` must not contain credentials (user:password@); put the key in \`apiKey\` or its environment variable, or a header in \`headers\``)
  }

  const keyEnv = config.apiKeyEnv || preset.apiKeyEnv
  const envKey = !config.apiKey && keyEnv ? env[keyEnv] || undefined : undefined
  const apiKey = config.apiKey || envKey
  // A custom endpoint (Ollama, vLLM, llama.cpp) usually runs without a key.
  if (!apiKey && config.preset !== 'custom') {
    return { kind: 'off', name, reason: `${keyEnv} is unset` }
  }

  return {
    kind: 'on',
    settings: {
      name,
      vendor: config.preset === 'custom' ? name : config.preset,
      url: baseUrl.replace(/\/+$/, '') + '/chat/completions',
      host: parsed.host,
      model,
      apiKey,
      ...(envKey ? { apiKeyEnv: keyEnv } : {}),
      // A preset's window is that of its own model: another model id makes it unknown unless configured.
      ...(config.contextWindow ? { contextWindow: config.contextWindow } : model === preset.model && preset.contextWindow ? { contextWindow: preset.contextWindow } : {}),
      maxTokens: config.maxTokens,
      maxTokensField: preset.maxTokensField,
      temperature: config.temperature,
      requestTimeoutMs: config.requestTimeoutMs,
      idleTimeoutMs: config.idleTimeoutMs,
      stallNoticeMs: config.stallNoticeMs,
      maxRetries: config.maxRetries,
      baseDelayMs: config.baseDelayMs,
      maxDelayMs: config.maxDelayMs,
      headers: { ...config.headers },
      streamUsage: config.streamUsage,
      structuredOutput: config.structuredOutput ?? preset.structuredOutput,
    },
  }
}

/** What the provider says about itself in `ctx.models.describe`: `deepseek at api.deepseek.com, key from DEEPSEEK_API_KEY`. */
export const describeSettings = (settings: ProviderSettings): ProviderDescription => {
  const key = settings.apiKeyEnv ? `key from ${settings.apiKeyEnv}` : settings.apiKey ? 'key from the config' : 'no key'
  return {
    summary: `${settings.name} at ${settings.host}, ${key}`,
    offline: false,
    host: settings.host,
    vendor: settings.vendor,
    model: settings.model,
    ...(settings.apiKeyEnv ? { keyEnv: settings.apiKeyEnv } : {}),
  }
}

/** What switches an entry that is off on: its own key variable first, then the other presets' (loaded as entries of their own). */
export const enableWith = (config: Config): string[] => {
  const own = config.apiKeyEnv || PRESETS[config.preset].apiKeyEnv
  return [...new Set([...(own ? [own] : []), ...PRESET_KEY_VARIABLES])]
}
