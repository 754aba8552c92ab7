import { maskerFor, type ProviderSettings } from './config.ts'
import { failure, type AttemptFailure } from './errors.ts'

type StopCause = 'caller' | 'request-timeout' | 'idle-timeout' | 'done'

const MAX_ERROR_BODY = 64 * 1024

/**
 * One HTTP request and its response body, with the two timeouts and the caller's signal all
 * acting through one AbortController, so any of them closes the socket at once.
 */
export class Exchange {
  private controller = new AbortController()
  private cause: StopCause | undefined
  private readonly onCallerAbort = () => this.stop('caller')

  constructor(private settings: ProviderSettings, private signal: AbortSignal, private onStall?: (silentMs: number) => void) {
    signal.addEventListener('abort', this.onCallerAbort, { once: true })
  }

  async open(body: string): Promise<Response> {
    const { settings } = this
    const headers: Record<string, string> = {
      ...settings.headers,
      'content-type': 'application/json',
      accept: 'text/event-stream',
    }
    if (settings.apiKey) headers.authorization = `Bearer ${settings.apiKey}`
    const timer = setTimeout(() => this.stop('request-timeout'), settings.requestTimeoutMs)
    try {
      // A redirect is answered, not followed: fetch would re-send the conversation and custom headers
      // (only Authorization is dropped) to whatever address the server names.
      return await fetch(settings.url, { method: 'POST', headers, body, signal: this.controller.signal, redirect: 'manual' })
    } finally {
      clearTimeout(timer)
    }
  }

  /**
   * The body as text pieces; a silence longer than `idleTimeoutMs` aborts the exchange, and each
   * `stallNoticeMs` of silence before that is told to `onStall`, so a stalled stream is not a silent wait.
   */
  async *text(response: Response): AsyncGenerator<string> {
    if (!response.body) return
    const reader = response.body.getReader()
    const decoder = new TextDecoder()
    try {
      while (true) {
        const timer = setTimeout(() => this.stop('idle-timeout'), this.settings.idleTimeoutMs)
        const stalls = this.watchStall()
        const result = await reader.read().finally(() => {
          clearTimeout(timer)
          clearInterval(stalls)
        })
        if (result.done) break
        const piece = decoder.decode(result.value, { stream: true })
        if (piece) yield piece
      }
      const rest = decoder.decode()
      if (rest) yield rest
    } finally {
      reader.releaseLock()
    }
  }

  private watchStall(): ReturnType<typeof setInterval> | undefined {
    const { stallNoticeMs, idleTimeoutMs } = this.settings
    const onStall = this.onStall
    if (!onStall || !stallNoticeMs || stallNoticeMs >= idleTimeoutMs) return undefined
    let silentMs = 0
    return setInterval(() => {
      silentMs += stallNoticeMs
      if (silentMs < idleTimeoutMs) onStall(silentMs)
    }, stallNoticeMs)
  }

  /** A bounded read of an error body: its message is all that is needed. */
  async readAll(response: Response): Promise<string> {
    let text = ''
    for await (const piece of this.text(response)) {
      text += piece
      if (text.length >= MAX_ERROR_BODY) break
    }
    return text
  }

  /** Maps whatever ended the exchange to a failure; timeouts and socket errors are transport failures. */
  describe(error: unknown): AttemptFailure {
    const { name, host, requestTimeoutMs, idleTimeoutMs } = this.settings
    switch (this.cause) {
      case 'caller':
        return failure('ABORTED', `${name}: request aborted`, false)
      case 'request-timeout':
        return failure('TRANSPORT', `${name}: no response from ${host} within ${requestTimeoutMs} ms`)
      case 'idle-timeout':
        return failure('TRANSPORT', `${name}: the stream from ${host} stalled (no data for ${idleTimeoutMs} ms)`)
    }
    return failure('TRANSPORT', `${name}: connection to ${host} failed: ${maskerFor(this.settings).mask(describeNetworkError(error))}`)
  }

  stop(cause: StopCause): void {
    this.cause ??= cause
    this.controller.abort()
  }

  close(): void {
    this.signal.removeEventListener('abort', this.onCallerAbort)
    this.stop('done')
  }
}

// undici reports `TypeError: fetch failed` with the useful part (ECONNRESET, ENOTFOUND, ...) in `cause`.
const describeNetworkError = (error: unknown): string => {
  const parts: string[] = []
  let current: unknown = error
  for (let depth = 0; current && depth < 4; depth++) {
    const { code, message } = current as { code?: unknown; message?: unknown }
    if (typeof code === 'string' && !parts.includes(code)) parts.push(code)
    if (typeof message === 'string' && message && message !== 'fetch failed' && !parts.includes(message)) parts.push(message)
    current = (current as { cause?: unknown }).cause
  }
  return parts.join(': ') || 'unknown network error'
}
