import type { ProviderDescription } from '@goalkeeper/model'
import Schema from 'schemastery'
import { createMasker, type Masker } from '@goalkeeper/kit'
import { Config as OpenAIConfig, type ProviderSettings as OpenAISettings } from '@goalkeeper/model-openai'

// An object schema always has its fields in `dict`; the type leaves it optional for other schemas.
const transport = OpenAIConfig.dict!

/** What each Claude model family takes and gives by default (a dated id such as `claude-sonnet-4-5-20250929` matches its family). */
export interface ModelPreset {
  contextWindow: number
  /** Output limit sent when neither the request nor the config sets one (the API requires `max_tokens`). */
  maxTokens: number
}

export const MODEL_PRESETS: Record<string, ModelPreset> = {
  'claude-sonnet-4-6': { contextWindow: 200_000, maxTokens: 64_000 },
  'claude-sonnet-4-5': { contextWindow: 200_000, maxTokens: 64_000 },
  'claude-sonnet-4-0': { contextWindow: 200_000, maxTokens: 64_000 },
  'claude-sonnet-4': { contextWindow: 200_000, maxTokens: 64_000 },
  'claude-opus-4-5': { contextWindow: 200_000, maxTokens: 64_000 },
  'claude-opus-4-1': { contextWindow: 200_000, maxTokens: 32_000 },
  'claude-opus-4-0': { contextWindow: 200_000, maxTokens: 32_000 },
  'claude-opus-4': { contextWindow: 200_000, maxTokens: 32_000 },
  'claude-haiku-4-5': { contextWindow: 200_000, maxTokens: 64_000 },
}

export const DEFAULT_MODEL = 'claude-sonnet-4-6'
export const DEFAULT_BASE_URL = 'https://api.anthropic.com'
export const KEY_VARIABLE = 'ANTHROPIC_API_KEY'
export const BASE_URL_VARIABLE = 'ANTHROPIC_BASE_URL'
/** Used when a model is unknown and nothing else says: every current Claude model gives at least this much. */
const FALLBACK_MAX_TOKENS = 8_192

/** The preset of `model`: its own entry, else the longest family name it starts with. */
export const presetOf = (model: string): ModelPreset | undefined => {
  if (MODEL_PRESETS[model]) return MODEL_PRESETS[model]
  const family = Object.keys(MODEL_PRESETS).filter((name) => model.startsWith(name + '-') || model === name + '-latest')
    .sort((a, b) => b.length - a.length)[0]
  return family ? MODEL_PRESETS[family] : undefined
}

export const Config = Schema.object({
  name: Schema.string().default('anthropic').description('Provider name in ctx.models.'),
  model: Schema.string().default(DEFAULT_MODEL).description('Model id; a request\'s own model wins.'),
  apiKey: Schema.string().role('secret').description('API key. When omitted it is read from the environment at load time.'),
  apiKeyEnv: Schema.string().default(KEY_VARIABLE).description('Environment variable holding the key.'),
  baseUrl: Schema.string().description(`API base URL (a gateway); default: $${BASE_URL_VARIABLE}, else ${DEFAULT_BASE_URL}.`),
  contextWindow: Schema.natural().min(1).description('Context window in tokens (default: the model\'s preset; unknown for other models).'),
  maxTokens: Schema.natural().min(1).description('Default output token limit; a request\'s own limit wins (default: the model\'s preset).'),
  thinkingBudget: Schema.natural().default(0).description('Extended thinking: tokens the model may think before answering (at least 1024); 0 turns thinking off.'),
  cache: Schema.boolean().default(true).description('Prompt caching: cache breakpoints on the system prompt and the end of the history.'),
  countTokens: Schema.boolean().default(true).description('Ask the count-tokens endpoint when the agent loop decides on compaction near the window.'),
  temperature: Schema.number().min(0).max(1).description('Sampling temperature (server default when omitted; not sent with thinking on).'),
  // Timeouts and retries mean here what they mean for the OpenAI-compatible provider (529 is a 5xx).
  requestTimeoutMs: transport.requestTimeoutMs,
  idleTimeoutMs: transport.idleTimeoutMs,
  maxRetries: transport.maxRetries,
  baseDelayMs: transport.baseDelayMs,
  maxDelayMs: transport.maxDelayMs,
  maxContinuations: Schema.natural().default(4).description('Follow-up requests after a `pause_turn` stop, within one model call.'),
  headers: Schema.dict(Schema.string()).default({}).description('Extra request headers (e.g. `anthropic-beta`).'),
})

export type Config = Schemastery.TypeT<typeof Config>

/** Timeouts, retries and headers as the OpenAI-compatible provider has them, plus what is Anthropic's own. */
export interface ProviderSettings extends Pick<OpenAISettings, 'requestTimeoutMs' | 'idleTimeoutMs' | 'maxRetries' | 'baseDelayMs' | 'maxDelayMs' | 'headers'> {
  name: string
  baseUrl: string
  /** Host only, for messages: a URL may carry credentials. */
  host: string
  model: string
  apiKey: string
  /** The variable the key came from; unset when the config gave it. */
  apiKeyEnv?: string
  contextWindow?: number
  maxTokens?: number
  thinkingBudget: number
  cache: boolean
  countTokens: boolean
  temperature?: number
  maxContinuations: number
}

export type Resolution =
  | { kind: 'on'; settings: ProviderSettings }
  | { kind: 'off'; name: string; reason: string }

export class ConfigError extends Error {
  override name = 'ConfigError'
}

/** The API refuses a smaller budget. */
export const MIN_THINKING_BUDGET = 1024

export const resolveSettings = (config: Config, env: NodeJS.ProcessEnv): Resolution => {
  const { name } = config
  const baseUrl = config.baseUrl || env[BASE_URL_VARIABLE] || DEFAULT_BASE_URL
  let parsed: URL
  try {
    parsed = new URL(baseUrl)
  } catch {
    throw new ConfigError(`model-anthropic (${name}): the base URL is not a URL`)
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new ConfigError(`model-anthropic (${name}): the base URL must be http or https`)
  if (parsed.username || parsed.password) {
    throw new ConfigError(`model-anthropic (${name}): the base URL must not contain credentials (user:password@); put the key in \`apiKey\` or ${config.apiKeyEnv}`)
  }
  if (config.thinkingBudget && config.thinkingBudget < MIN_THINKING_BUDGET) {
    throw new ConfigError(`model-anthropic (${name}): \`thinkingBudget\` must be 0 (off) or at least ${MIN_THINKING_BUDGET}`)
  }
  const envKey = config.apiKey ? undefined : env[config.apiKeyEnv] || undefined
  const apiKey = config.apiKey || envKey
  if (!apiKey) return { kind: 'off', name, reason: `${config.apiKeyEnv} is unset` }
  const preset = presetOf(config.model)
  const { name: _name, model: _model, apiKey: _key, apiKeyEnv: _env, baseUrl: _url, contextWindow: _window, maxTokens: _max, headers: _headers, ...rest } = config
  return {
    kind: 'on',
    settings: {
      name,
      baseUrl: baseUrl.replace(/\/+$/, ''),
      host: parsed.host,
      model: config.model,
      apiKey,
      ...(envKey ? { apiKeyEnv: config.apiKeyEnv } : {}),
      contextWindow: config.contextWindow ?? preset?.contextWindow,
      maxTokens: config.maxTokens ?? preset?.maxTokens,
      // The rest of the config is taken as it is.
      ...rest,
      headers: { ...config.headers },
    },
  }
}

/** The output limit of a request: its own, the config's, the model's preset, else a floor every model gives. */
export const maxTokensFor = (settings: ProviderSettings, model: string, requested?: number): number =>
  requested ?? (model === settings.model ? settings.maxTokens : presetOf(model)?.maxTokens) ?? FALLBACK_MAX_TOKENS

/** The context window of `model`: the configured one for the configured model, else its preset's. */
export const contextWindowFor = (settings: ProviderSettings, model?: string): number | undefined =>
  model === undefined || model === settings.model ? settings.contextWindow : presetOf(model)?.contextWindow

export const describeSettings = (settings: ProviderSettings): ProviderDescription => ({
  summary: `${settings.name} at ${settings.host}, key from ${settings.apiKeyEnv ?? 'the config'}`,
  offline: false,
  host: settings.host,
  vendor: 'anthropic',
  model: settings.model,
  ...(settings.apiKeyEnv ? { keyEnv: settings.apiKeyEnv } : {}),
})

/** Header values this short are not secrets (as in model-openai). */
const MIN_SECRET_HEADER_CHARS = 8

export const maskerFor = (settings: ProviderSettings): Masker => createMasker({
  values: [settings.apiKey, ...Object.values(settings.headers).filter((value) => value.length >= MIN_SECRET_HEADER_CHARS)],
})
