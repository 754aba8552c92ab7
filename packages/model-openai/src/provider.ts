import type { ModelChunk, ModelProvider, ModelRequest, ModelRetryInfo, ModelStreamNotice } from '@goalkeeper/model'
import { delay, describeError } from '@goalkeeper/kit'
import { describeSettings, maskerFor, type ProviderSettings } from './config.ts'
import { buildRequestBody } from './request-body.ts'
import { Exchange } from './exchange.ts'
import { httpFailure, redirectFailure, type AttemptFailure } from './errors.ts'
import { backoffDelay } from './backoff.ts'
import { readStream, unstreamedFailure, type AttemptEvent } from './read-stream.ts'

export interface ProviderLogger {
  debug(format: unknown, ...args: unknown[]): void
  info(format: unknown, ...args: unknown[]): void
}

export interface ProviderOptions {
  /** Jitter source (tests pin it). */
  random?: () => number
  /** Told before each backoff wait (the plugin emits `model/retry`). */
  onRetry?: (retry: ModelRetryInfo) => void
  /** Told when a stream breaks after output or goes quiet (the plugin emits `model/stream`). */
  onStream?: (notice: ModelStreamNotice) => void
}

export const createOpenAIProvider = (settings: ProviderSettings, logger: ProviderLogger, options: ProviderOptions = {}): ModelProvider => ({
  stream: (request, signal) => streamCompletion(settings, logger, options, request, signal),
  describe: () => describeSettings(settings),
  // A request for another model id than the configured one has a window nobody told us about.
  contextWindow: (model) => (model === undefined || model === settings.model ? settings.contextWindow : undefined),
})

async function* streamCompletion(
  settings: ProviderSettings, logger: ProviderLogger, options: ProviderOptions, request: ModelRequest, signal: AbortSignal,
): AsyncGenerator<ModelChunk> {
  const aborted = (): ModelChunk => ({ type: 'finish', reason: 'error', error: { code: 'ABORTED', message: `${settings.name}: request aborted` } })
  let body: string
  try {
    body = JSON.stringify(buildRequestBody(request, settings))
  } catch (error) {
    const message = describeError(error)
    return yield { type: 'finish', reason: 'error', error: { code: 'BAD_REQUEST', message: `${settings.name}: cannot build the request: ${message}` } }
  }
  // Once a chunk reached the caller, a retry would duplicate output: from then on failures are final.
  let delivered = false

  for (let retry = 0; ; retry++) {
    if (signal.aborted) return yield aborted()
    let failed: AttemptFailure | undefined
    let frames = 0
    let cut = false
    for await (const event of attempt(settings, body, signal, options)) {
      // Chunks parsed from the same read as the abort are dropped: after an abort only its finish comes.
      if (signal.aborted) {
        cut = true
        break
      }
      if (event.kind === 'failed') {
        failed = event.failure
        frames = event.frames ?? 0
        break
      }
      delivered = true
      yield event.chunk
    }
    if (cut) return yield aborted()
    if (!failed) return
    if (signal.aborted) return yield aborted()

    const { error, retryable } = failed
    const wait = error.retryAfterMs ?? backoffDelay(retry, settings.baseDelayMs, settings.maxDelayMs, options.random)
    if (!retryable || delivered || retry >= settings.maxRetries || wait > settings.maxDelayMs) {
      // Output already shown is cut off here: said, so a front end can mark it before anything else follows.
      if (delivered) options.onStream?.({ kind: 'broken', frames, error })
      return yield { type: 'finish', reason: 'error', error }
    }
    logger.info('%s (retry %d of %d in %d ms)', error.message, retry + 1, settings.maxRetries, wait)
    options.onRetry?.({ attempt: retry + 1, of: settings.maxRetries, waitMs: wait, error })
    await delay(wait, { signal })
  }
}

/** One HTTP attempt: its chunks as they arrive, ending with the closing chunks or a failure. */
async function* attempt(settings: ProviderSettings, body: string, signal: AbortSignal, options: ProviderOptions): AsyncGenerator<AttemptEvent> {
  const { onStream } = options
  const exchange = new Exchange(settings, signal, onStream && ((silentMs) => onStream({ kind: 'stalled', silentMs, limitMs: settings.idleTimeoutMs })))
  try {
    let response: Response
    try {
      response = await exchange.open(body)
    } catch (error) {
      return yield { kind: 'failed', failure: exchange.describe(error) }
    }
    if (response.status >= 300 && response.status < 400) {
      return yield { kind: 'failed', failure: redirectFailure(settings.name, response.status, response.headers.get('location'), settings.url) }
    }
    if (!response.ok) {
      let text = ''
      try {
        text = await exchange.readAll(response)
      } catch (error) {
        if (signal.aborted) return yield { kind: 'failed', failure: exchange.describe(error) }
      }
      return yield { kind: 'failed', failure: httpFailure(settings.name, response.status, text, response.headers, maskerFor(settings)) }
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
