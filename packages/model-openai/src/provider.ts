import type { ModelChunk, ModelProvider, ModelRequest } from '@goalkeeper/model'
import { createParser } from 'eventsource-parser'
import type { ProviderSettings } from './config.ts'
import { buildRequestBody } from './request-body.ts'
import { StreamDecoder } from './stream-decoder.ts'
import { Exchange } from './exchange.ts'
import { failure, httpFailure, streamedFailure, type AttemptFailure } from './errors.ts'
import { backoffDelay, sleep } from './backoff.ts'

export interface ProviderLogger {
  debug(format: unknown, ...args: unknown[]): void
  info(format: unknown, ...args: unknown[]): void
}

export interface ProviderOptions {
  /** Jitter source (tests pin it). */
  random?: () => number
}

// Guards memory against a server that never ends a line.
const MAX_SSE_BUFFER = 8 * 1024 * 1024

export const createOpenAIProvider = (settings: ProviderSettings, logger: ProviderLogger, options: ProviderOptions = {}): ModelProvider => ({
  stream: (request, signal) => streamCompletion(settings, logger, options, request, signal),
})

type AttemptEvent = { kind: 'chunk'; chunk: ModelChunk } | { kind: 'failed'; failure: AttemptFailure }

async function* streamCompletion(
  settings: ProviderSettings, logger: ProviderLogger, options: ProviderOptions, request: ModelRequest, signal: AbortSignal,
): AsyncGenerator<ModelChunk> {
  const aborted = (): ModelChunk => ({ type: 'finish', reason: 'error', error: { code: 'ABORTED', message: `${settings.name}: request aborted` } })
  let body: string
  try {
    body = JSON.stringify(buildRequestBody(request, settings))
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    return yield { type: 'finish', reason: 'error', error: { code: 'BAD_REQUEST', message: `${settings.name}: cannot build the request: ${message}` } }
  }
  // Once a chunk reached the caller, a retry would duplicate output: from then on failures are final.
  let delivered = false

  for (let retry = 0; ; retry++) {
    if (signal.aborted) return yield aborted()
    let failed: AttemptFailure | undefined
    for await (const event of attempt(settings, body, signal)) {
      if (event.kind === 'failed') {
        failed = event.failure
        break
      }
      delivered = true
      yield event.chunk
    }
    if (!failed) return
    if (signal.aborted) return yield aborted()

    const { error, retryable } = failed
    const wait = error.retryAfterMs ?? backoffDelay(retry, settings.baseDelayMs, settings.maxDelayMs, options.random)
    if (!retryable || delivered || retry >= settings.maxRetries || wait > settings.maxDelayMs) {
      return yield { type: 'finish', reason: 'error', error }
    }
    logger.info('%s (retry %d of %d in %d ms)', error.message, retry + 1, settings.maxRetries, wait)
    await sleep(wait, signal)
  }
}

/** One HTTP attempt: its chunks as they arrive, ending with the closing chunks or a failure. */
async function* attempt(settings: ProviderSettings, body: string, signal: AbortSignal): AsyncGenerator<AttemptEvent> {
  const exchange = new Exchange(settings, signal)
  try {
    let response: Response
    try {
      response = await exchange.open(body)
    } catch (error) {
      return yield { kind: 'failed', failure: exchange.describe(error) }
    }
    if (!response.ok) {
      let text = ''
      try {
        text = await exchange.readAll(response)
      } catch (error) {
        if (signal.aborted) return yield { kind: 'failed', failure: exchange.describe(error) }
      }
      return yield { kind: 'failed', failure: httpFailure(settings.name, response.status, text, response.headers, settings.apiKey) }
    }
    if (/application\/json/i.test(response.headers.get('content-type') ?? '')) {
      return yield { kind: 'failed', failure: await unstreamedFailure(settings, exchange, response) }
    }
    yield* readStream(settings, exchange, response, signal)
  } finally {
    // Also runs when the caller stops iterating early: the socket must not outlive the request.
    exchange.close()
  }
}

async function* readStream(settings: ProviderSettings, exchange: Exchange, response: Response, signal: AbortSignal): AsyncGenerator<AttemptEvent> {
  const decoder = new StreamDecoder(settings.name, settings.apiKey)
  const pending: string[] = []
  const parser = createParser({ onEvent: (event) => pending.push(event.data), maxBufferSize: MAX_SSE_BUFFER })
  try {
    for await (const text of exchange.text(response)) {
      parser.feed(text)
      while (pending.length) {
        const result = decoder.decode(pending.shift()!)
        if (result.kind === 'failed') return yield { kind: 'failed', failure: result.failure }
        for (const chunk of result.chunks) yield { kind: 'chunk', chunk }
        if (decoder.done) break
      }
      if (decoder.done) break
    }
  } catch (error) {
    // A server that sent its finish reason but then hangs or drops the socket still gave a full answer.
    if (signal.aborted || !decoder.finished) return yield { kind: 'failed', failure: exchange.describe(error) }
  }
  const end = decoder.end()
  if (end.kind === 'failed') return yield { kind: 'failed', failure: end.failure }
  for (const chunk of end.chunks) yield { kind: 'chunk', chunk }
}

// A server that ignores `stream: true` (or reports an error as a 200 JSON body).
const unstreamedFailure = async (settings: ProviderSettings, exchange: Exchange, response: Response): Promise<AttemptFailure> => {
  let text = ''
  try {
    text = await exchange.readAll(response)
  } catch (error) {
    return exchange.describe(error)
  }
  try {
    const parsed = JSON.parse(text) as { error?: unknown }
    if (parsed?.error) return streamedFailure(settings.name, parsed, settings.apiKey)
  } catch {
    // fall through: not an error object
  }
  return failure('SERVER', `${settings.name}: the server answered with JSON instead of an event stream`, false)
}
