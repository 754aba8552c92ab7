import http from 'node:http'
import https from 'node:https'
import { describeError } from '@goalkeeper/kit'

/** What one POST came to: a status, or why none came. */
export type PostResult =
  | { kind: 'response'; status: number; retryAfter?: string }
  | { kind: 'timeout' }
  | { kind: 'aborted' }
  | { kind: 'network'; message: string }

/**
 * One POST of `body`, ended by `timeoutMs` or by `signal` (the plugin unloading). Only the status and
 * Retry-After are read; the response body is drained and dropped. `connection: close`: webhooks are rare,
 * and a kept-alive socket would outlive the plugin.
 */
export function post(url: URL, headers: Record<string, string>, body: string, timeoutMs: number, signal: AbortSignal): Promise<PostResult> {
  const timeout = AbortSignal.timeout(timeoutMs)
  const both = AbortSignal.any([timeout, signal])
  const transport = url.protocol === 'https:' ? https : http
  return new Promise((resolve) => {
    const request = transport.request(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), connection: 'close' },
      signal: both,
    }, (response) => {
      response.resume()
      const retryAfter = response.headers['retry-after']
      resolve({ kind: 'response', status: response.statusCode ?? 0, ...(retryAfter !== undefined && { retryAfter }) })
    })
    request.on('error', (error) => {
      if (signal.aborted) resolve({ kind: 'aborted' })
      else if (timeout.aborted) resolve({ kind: 'timeout' })
      else resolve({ kind: 'network', message: describeError(error) })
    })
    request.end(body)
  })
}
