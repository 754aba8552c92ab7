import type { ModelError, ModelErrorCode } from '@goalkeeper/model'

/** A failure of one attempt, with whether another attempt may help. */
export interface AttemptFailure {
  error: ModelError
  retryable: boolean
}

const MAX_SERVER_MESSAGE = 300

const QUOTA_WORDING = /insufficient[ _]balance|insufficient[ _]quota|exceeded your current quota|quota exceeded|billing/i
const CONTEXT_WORDING = /context_length_exceeded|maximum context length|context length|context window|prompt is too long|too many tokens/i

export const RETRYABLE: ReadonlySet<string> = new Set<ModelErrorCode>(['RATE_LIMIT', 'SERVER', 'TRANSPORT'])

export const truncate = (text: string, max = MAX_SERVER_MESSAGE): string =>
  text.length > max ? text.slice(0, max) + '…' : text

/** Servers sometimes quote the key they were given; errors and logs must never carry it. */
export const redact = (text: string, secret: string | undefined): string => {
  let out = secret ? text.split(secret).join('***') : text
  out = out.replace(/\b(sk-[A-Za-z0-9_-]{2})[A-Za-z0-9_\-*.]{6,}/g, '$1***')
  return out.replace(/(bearer\s+)[^\s"',}]+/gi, '$1***')
}

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

/** `retry-after-ms` (non-standard, sent by OpenAI) wins over `retry-after` (seconds or an HTTP date). */
export const parseRetryAfter = (headers: Headers, now = Date.now()): number | undefined => {
  const ms = headers.get('retry-after-ms')
  if (ms !== null && ms.trim() !== '' && Number.isFinite(Number(ms)) && Number(ms) >= 0) return Math.ceil(Number(ms))
  const value = headers.get('retry-after')?.trim()
  if (!value) return undefined
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000)
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

const codeForStatus = (status: number, message: string): ModelErrorCode => {
  if (status === 402 || QUOTA_WORDING.test(message)) return 'QUOTA'
  if (status === 401 || status === 403) return 'AUTH'
  if (status === 429) return 'RATE_LIMIT'
  if (status === 408) return 'TRANSPORT'
  if (status >= 400 && status < 500) return CONTEXT_WORDING.test(message) ? 'CONTEXT_OVERFLOW' : 'BAD_REQUEST'
  return 'SERVER'
}

export const httpFailure = (provider: string, status: number, body: string, headers: Headers, secret?: string): AttemptFailure => {
  const message = redact(truncate(serverMessage(body) || '(empty body)'), secret)
  const code = codeForStatus(status, message)
  const error: ModelError = { code, message: `${provider}: HTTP ${status}: ${message}` }
  const retryAfterMs = code === 'RATE_LIMIT' ? parseRetryAfter(headers) : undefined
  if (retryAfterMs !== undefined) error.retryAfterMs = retryAfterMs
  return { error, retryable: RETRYABLE.has(code) }
}

/** An `{"error": ...}` frame inside a 200 stream (vLLM, OpenRouter and others report late failures this way). */
export const streamedFailure = (provider: string, frame: unknown, secret?: string): AttemptFailure => {
  const message = redact(truncate(pickMessage(frame) ?? 'error frame'), secret)
  const code: ModelErrorCode = QUOTA_WORDING.test(message) ? 'QUOTA'
    : CONTEXT_WORDING.test(message) ? 'CONTEXT_OVERFLOW'
      : /rate.?limit/i.test(message) ? 'RATE_LIMIT'
        : 'SERVER'
  return { error: { code, message: `${provider}: stream error: ${message}` }, retryable: RETRYABLE.has(code) }
}

export const failure = (code: ModelError['code'], message: string, retryable = RETRYABLE.has(code)): AttemptFailure =>
  ({ error: { code, message }, retryable })
