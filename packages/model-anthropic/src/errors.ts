import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from '@anthropic-ai/sdk'
import { clip, describeError, type Masker } from '@goalkeeper/kit'
import type { ModelError, ModelErrorCode } from '@goalkeeper/model'
import { parseRetryAfter } from '@goalkeeper/model-openai'
import type { ProviderSettings } from './config.ts'

export interface AttemptFailure {
  error: ModelError
  retryable: boolean
}

export const RETRYABLE: ReadonlySet<string> = new Set<ModelErrorCode>(['RATE_LIMIT', 'SERVER', 'TRANSPORT'])

const MAX_SERVER_MESSAGE = 300
const CONTEXT_WORDING = /prompt is too long|context window|context length|too many tokens/i
const QUOTA_WORDING = /credit balance|spend limit|billing|quota/i

export const failure = (code: ModelError['code'], message: string, retryable = RETRYABLE.has(code)): AttemptFailure =>
  ({ error: { code, message }, retryable })

/**
 * The code of an API error from its HTTP status, or (an `error` event inside a 200 stream has none) from its
 * `error.type`, then the wording for what both share with other causes (a 400 or 429 may be billing).
 */
const codeOf = (status: number | undefined, type: string, errorCode: string, message: string): ModelErrorCode => {
  if (status === 402 || type === 'billing_error' || errorCode === 'enforced_spend_limit_reached' || QUOTA_WORDING.test(message)) return 'QUOTA'
  if (status === 401 || status === 403 || type === 'authentication_error' || type === 'permission_error') return 'AUTH'
  if (status === 429 || type === 'rate_limit_error') return 'RATE_LIMIT'
  if (status === 413 || type === 'request_too_large' || CONTEXT_WORDING.test(message)) return 'CONTEXT_OVERFLOW'
  if (status === 408 || type === 'timeout_error') return 'TRANSPORT'
  if (status !== undefined && status >= 400 && status < 500) return 'BAD_REQUEST'
  if (type === 'invalid_request_error' || type === 'not_found_error') return 'BAD_REQUEST'
  // 500 api_error, 529 overloaded_error, and unknown types: the server's side.
  return 'SERVER'
}

/** One line a person can act on: what failed, the server's words, and for a refused key the variable to fix. */
export const describeFailure = (settings: ProviderSettings, error: unknown, masker: Masker, signalAborted: boolean): AttemptFailure => {
  const { name } = settings
  if (signalAborted || error instanceof APIUserAbortError) return failure('ABORTED', `${name}: request aborted`, false)
  if (error instanceof APIConnectionTimeoutError) return failure('TRANSPORT', `${name}: no response from ${settings.host} within ${settings.requestTimeoutMs} ms`)
  if (error instanceof APIConnectionError) {
    return failure('TRANSPORT', `${name}: cannot reach ${settings.host}: ${clip(masker.mask(describeError(error.cause ?? error)), MAX_SERVER_MESSAGE)}`)
  }
  if (error instanceof APIError) {
    const type = error.type ?? ''
    const words = clip(masker.mask(error.apiMessage ?? ''), MAX_SERVER_MESSAGE) || '(no message)'
    const code = codeOf(error.status, type, error.errorCode ?? '', words)
    const where = error.status === undefined ? 'stream error' : `HTTP ${error.status}`
    let message = `${name}: ${where}: ${type ? `${type}: ` : ''}${words}`
    if (code === 'AUTH') {
      const key = settings.apiKeyEnv ? `check ${settings.apiKeyEnv}` : 'check the configured `apiKey`'
      message = `${name}: ${error.status === 403 || type === 'permission_error' ? 'the API key may not do this' : 'the API key was refused'} (${where}: ${words}); ${key}`
    }
    const result: ModelError = { code, message }
    const retryAfterMs = (code === 'RATE_LIMIT' || code === 'SERVER') && error.headers ? parseRetryAfter(error.headers) : undefined
    if (retryAfterMs !== undefined) result.retryAfterMs = retryAfterMs
    return { error: result, retryable: RETRYABLE.has(code) }
  }
  // fetch's own failures while the body streams (a reset socket: `TypeError: terminated`).
  return failure('TRANSPORT', `${name}: the connection to ${settings.host} failed: ${clip(masker.mask(describeError(error)), MAX_SERVER_MESSAGE)}`)
}
