import { clip, type Masker } from '@goalkeeper/kit'
import type { ModelError, ModelErrorCode } from '@goalkeeper/model'

/** A failure of one attempt, with whether another attempt may help. */
export interface AttemptFailure {
  error: ModelError
  retryable: boolean
}

const MAX_SERVER_MESSAGE = 300

const QUOTA_WORDING = /insufficient[ _]balance|insufficient[ _]quota|exceeded your current quota|quota exceeded|billing/i
// OpenAI (`context_length_exceeded`, "Input tokens exceed the configured limit of N tokens"), DeepSeek and vLLM
// ("This model's maximum context length is N tokens. However, you requested M tokens"), older vLLM ("Input prompt
// (M tokens) is too long and exceeds limit of N"), Ollama ("the input length exceeds the context length"),
// LM Studio ("Input length M exceeds context length N").
const CONTEXT_WORDING = /context_length_exceeded|maximum context length|context length|context window|prompt is too long|too many tokens|input tokens exceed|exceeds limit of|exceeds the context|context limit/i
const AUTH_WORDING = /incorrect api key|invalid api key|invalid_api_key|authentication|unauthori[sz]ed|permission denied|forbidden|api key not valid/i
const RATE_WORDING = /rate.?limit|too many requests/i

export const RETRYABLE: ReadonlySet<string> = new Set<ModelErrorCode>(['RATE_LIMIT', 'SERVER', 'TRANSPORT'])

// Servers sometimes quote the key or a header they were given, and network errors may quote the URL:
// errors and logs must carry none of them. Text is masked (maskerFor in config.ts) before any cut, so no
// prefix of a secret survives.

/** A bounded, secret-free excerpt of raw server output for an error message. */
export const excerpt = (raw: string, masker: Masker, max = 120): string =>
  // Mask a window larger than the excerpt, so a secret that starts inside the excerpt is matched whole.
  clip(masker.mask(raw.slice(0, max + 4096)).replace(/\s+/g, ' ').trim(), max)

/** The human-readable message of an OpenAI-style error body, or the body itself. */
export const serverMessage = (body: string): string => {
  const text = body.trim()
  try {
    const parsed = JSON.parse(text) as unknown
    const found = pickMessage(parsed)
    if (found) return found
  } catch {
    // not JSON: the raw text is the message
  }
  return text
}

const pickMessage = (value: unknown): string | undefined => {
  if (!value || typeof value !== 'object') return typeof value === 'string' ? value : undefined
  const record = value as Record<string, unknown>
  const error = record.error
  if (typeof error === 'string') return error
  if (error && typeof error === 'object') {
    const inner = error as Record<string, unknown>
    const parts = [inner.message, inner.code, inner.type].filter((part) => typeof part === 'string' && part)
    if (parts.length) return [...new Set(parts)].join(' | ')
  }
  for (const key of ['message', 'detail']) if (typeof record[key] === 'string') return record[key] as string
  return undefined
}

/**
 * Longer waits are reported as 30 days: far beyond any wait a caller takes on (goal-auto-resume declines a
 * reset more than 26 h away, so a reset 30 h away must read as 30 h, not be cut to something it would wait
 * for), and the number stays finite (JSON has no Infinity).
 */
export const MAX_RETRY_AFTER_MS = 30 * 24 * 60 * 60 * 1000
const DECIMAL = /^\d+(\.\d+)?$/
const HTTP_DATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? /i

/**
 * `retry-after-ms` (non-standard, sent by OpenAI) wins over `retry-after` (seconds or an HTTP date).
 * Anything else (negative, hex, words, a bare year) is ignored: JavaScript's lenient number and date
 * parsing would turn garbage into a zero wait or a wait of years.
 */
export const parseRetryAfter = (headers: Headers, now = Date.now()): number | undefined => {
  const ms = headers.get('retry-after-ms')?.trim()
  if (ms && /^\d+(\.\d+)?(e\+?\d+)?$/i.test(ms)) return Math.min(MAX_RETRY_AFTER_MS, Math.ceil(Number(ms)))
  const value = headers.get('retry-after')?.trim()
  if (!value) return undefined
  if (DECIMAL.test(value)) return Math.min(MAX_RETRY_AFTER_MS, Math.ceil(Number(value) * 1000))
  const date = HTTP_DATE.test(value) ? Date.parse(value) : NaN
  return Number.isNaN(date) ? undefined : Math.min(MAX_RETRY_AFTER_MS, Math.max(0, date - now))
}

const codeForStatus = (status: number, message: string): ModelErrorCode => {
  if (status === 402 || QUOTA_WORDING.test(message)) return 'QUOTA'
  if (status === 401 || status === 403) return 'AUTH'
  if (status === 429) return 'RATE_LIMIT'
  if (status === 408) return 'TRANSPORT'
  if (status >= 400 && status < 500) return CONTEXT_WORDING.test(message) ? 'CONTEXT_OVERFLOW' : 'BAD_REQUEST'
  return 'SERVER'
}

/** The first number one of `patterns` captures in `text`, thousands separators allowed. */
const firstCount = (text: string, patterns: readonly RegExp[]): number | undefined => {
  for (const pattern of patterns) {
    const found = pattern.exec(text)?.[1]
    const count = found === undefined ? NaN : Number(found.replace(/[,_]/g, ''))
    if (Number.isSafeInteger(count) && count > 0) return count
  }
  return undefined
}

const LIMIT_FIGURES = [
  /maximum context length is (\d[\d,]*)/i,
  /configured limit of (\d[\d,]*)/i,
  /exceeds limit of (\d[\d,]*)/i,
  /exceeds context length (?:of )?(\d[\d,]*)/i,
]
// The input alone when the server says it apart from the completion: that is the part compaction shrinks.
const REQUEST_FIGURES = [
  /(\d[\d,]*) in the messages/i,
  /resulted in (\d[\d,]*) tokens/i,
  /request has (\d[\d,]*) input tokens/i,
  /contains at least (\d[\d,]*) input tokens/i,
  /input prompt \((\d[\d,]*) tokens\)/i,
  /input length (\d[\d,]*) exceeds/i,
  /you requested (\d[\d,]*) tokens/i,
]

/**
 * The figures of a context-length refusal, when the server states them: its limit and what it counted for
 * the request, in its own tokens. Ollama states neither; the agent loop then learns from its own estimate.
 */
export const overflowFigures = (message: string): Pick<ModelError, 'contextLimit' | 'requestTokens'> => {
  const contextLimit = firstCount(message, LIMIT_FIGURES)
  const requestTokens = firstCount(message, REQUEST_FIGURES)
  return { ...(contextLimit ? { contextLimit } : {}), ...(requestTokens ? { requestTokens } : {}) }
}

/** The error of a classified failure, with the refusal's figures for a CONTEXT_OVERFLOW. */
const classified = (code: ModelErrorCode, message: string): ModelError =>
  ({ code, message, ...(code === 'CONTEXT_OVERFLOW' ? overflowFigures(message) : {}) })

export const httpFailure = (provider: string, status: number, body: string, headers: Headers, masker: Masker): AttemptFailure => {
  const message = clip(masker.mask(serverMessage(body) || '(empty body)'), MAX_SERVER_MESSAGE)
  const code = codeForStatus(status, message)
  const error = classified(code, `${provider}: HTTP ${status}: ${message}`)
  const retryAfterMs = code === 'RATE_LIMIT' ? parseRetryAfter(headers) : undefined
  if (retryAfterMs !== undefined) error.retryAfterMs = retryAfterMs
  return { error, retryable: RETRYABLE.has(code) }
}

/**
 * An `{"error": ...}` frame inside a 200 stream (vLLM, OpenRouter and others report late failures this way;
 * OpenAI-compatible proxies send "Incorrect API key" this way too). Classified like an HTTP error: by the
 * status the frame carries (`code: 401`, `status: 429`), else by its code and wording.
 */
export const streamedFailure = (provider: string, frame: unknown, masker: Masker): AttemptFailure => {
  const message = clip(masker.mask(pickMessage(frame) ?? 'error frame'), MAX_SERVER_MESSAGE)
  const status = statusOf(frame)
  const code: ModelErrorCode = status !== undefined ? codeForStatus(status, message)
    : QUOTA_WORDING.test(message) ? 'QUOTA'
      : AUTH_WORDING.test(message) ? 'AUTH'
        : CONTEXT_WORDING.test(message) ? 'CONTEXT_OVERFLOW'
          : RATE_WORDING.test(message) ? 'RATE_LIMIT'
            : 'SERVER'
  return { error: classified(code, `${provider}: stream error: ${message}`), retryable: RETRYABLE.has(code) }
}

/** An HTTP-like status inside an error frame: `status` or `code` of the error or the frame, as a number (or numeric string). */
const statusOf = (frame: unknown): number | undefined => {
  const error = (frame as { error?: unknown })?.error
  // Ollama puts the status beside a string error: `{"error": "...", "status": 404}`.
  const holders = [error, frame].filter((value): value is Record<string, unknown> => !!value && typeof value === 'object')
  for (const [holder, key] of holders.flatMap((holder) => [[holder, 'status'], [holder, 'code']] as const)) {
    const value = holder[key]
    const number = typeof value === 'number' ? value : typeof value === 'string' && /^\d{3}$/.test(value) ? Number(value) : undefined
    if (number !== undefined && number >= 400 && number < 600) return number
  }
  return undefined
}

/** 3xx: fetch is told not to follow, so the conversation and headers never go to an address nobody configured. */
export const redirectFailure = (provider: string, status: number, location: string | null, base: string): AttemptFailure => {
  let target = 'another address'
  try {
    // `.host` never includes user info.
    if (location) target = new URL(location, base).host
  } catch {
    // an unparsable Location: the generic wording stays
  }
  return failure('BAD_REQUEST', `${provider}: HTTP ${status}: the server redirects to ${target}; set baseUrl to the final address`, false)
}

export const failure = (code: ModelError['code'], message: string, retryable = RETRYABLE.has(code)): AttemptFailure =>
  ({ error: { code, message }, retryable })
