import Anthropic from '@anthropic-ai/sdk'
import type { ModelChunk, ModelError, ModelProvider, ModelRequest } from '@goalkeeper/model'
import type { Usage } from '@goalkeeper/session'
import { delay, describeError } from '@goalkeeper/kit'
import { backoffDelay, type ProviderLogger, type ProviderOptions } from '@goalkeeper/model-openai'
import { contextWindowFor, describeSettings, maskerFor, type ProviderSettings } from './config.ts'
import { buildRequestBody, type RequestBody } from './request-body.ts'
import { StreamDecoder } from './stream-decoder.ts'
import { describeFailure, failure, type AttemptFailure } from './errors.ts'
import { addUsage, toUsage } from './usage.ts'

export const createClient = (settings: ProviderSettings): Anthropic => new Anthropic({
  apiKey: settings.apiKey,
  // Explicit, so the SDK never picks up ANTHROPIC_AUTH_TOKEN or other credentials from the environment.
  authToken: null,
  baseURL: settings.baseUrl,
  // Retries are this provider's: only before any output, announced as model/retry.
  maxRetries: 0,
  timeout: settings.requestTimeoutMs,
  defaultHeaders: settings.headers,
  // The SDK would print to the console; stdout is the ACP channel and stderr the host's log.
  logLevel: 'off',
})

export const createAnthropicProvider = (settings: ProviderSettings, logger: ProviderLogger, options: ProviderOptions = {}): ModelProvider => {
  const client = createClient(settings)
  return {
    stream: (request, signal) => streamMessage(client, settings, logger, options, request, signal),
    describe: () => describeSettings(settings),
    contextWindow: (model) => contextWindowFor(settings, model),
    ...(settings.countTokens ? { countTokens: (request: ModelRequest, signal: AbortSignal) => countTokens(client, settings, logger, request, signal) } : {}),
  }
}

/** The count-tokens endpoint; undefined when it fails, so the caller's estimate decides. */
async function countTokens(client: Anthropic, settings: ProviderSettings, logger: ProviderLogger, request: ModelRequest, signal: AbortSignal): Promise<number | undefined> {
  try {
    const { model, system, messages, tools, thinking } = buildRequestBody(request, settings)
    const params = { model, messages, ...(system ? { system } : {}), ...(tools ? { tools } : {}), ...(thinking ? { thinking } : {}) }
    const counted = await client.messages.countTokens(params as unknown as Anthropic.MessageCountTokensParams, { signal })
    return typeof counted.input_tokens === 'number' ? counted.input_tokens : undefined
  } catch (error) {
    if (!signal.aborted) logger.info('%s: token count failed, the estimate stands: %s', settings.name, describeFailure(settings, error, maskerFor(settings), false).error.message)
    return undefined
  }
}

type AttemptEvent = { kind: 'chunk'; chunk: ModelChunk } | { kind: 'failed'; failure: AttemptFailure } | { kind: 'done'; decoder: StreamDecoder }

async function* streamMessage(
  client: Anthropic, settings: ProviderSettings, logger: ProviderLogger, options: ProviderOptions, request: ModelRequest, signal: AbortSignal,
): AsyncGenerator<ModelChunk> {
  const aborted = (): ModelChunk => ({ type: 'finish', reason: 'error', error: { code: 'ABORTED', message: `${settings.name}: request aborted` } })
  let body: RequestBody
  try {
    body = buildRequestBody(request, settings)
  } catch (error) {
    return yield { type: 'finish', reason: 'error', error: { code: 'BAD_REQUEST', message: `${settings.name}: cannot build the request: ${describeError(error)}` } }
  }
  let usage: Usage | undefined
  let toolCalls = 0
  let refusal = ''
  // A `pause_turn` stop asks for the answer so far to be sent back as is, so the model can go on.
  for (let continuation = 0; ; continuation++) {
    let delivered = false
    let decoder: StreamDecoder | undefined
    for (let retry = 0; !decoder; retry++) {
      if (signal.aborted) return yield aborted()
      let failed: AttemptFailure | undefined
      for await (const event of attempt(client, settings, body, signal)) {
        if (signal.aborted) return yield aborted()
        if (event.kind === 'failed') failed = event.failure
        else if (event.kind === 'done') decoder = event.decoder
        else {
          delivered = true
          yield event.chunk
        }
      }
      if (signal.aborted) return yield aborted()
      if (!failed) break
      const { error, retryable } = failed
      const wait = error.retryAfterMs ?? backoffDelay(retry, settings.baseDelayMs, settings.maxDelayMs, options.random)
      // Once a chunk reached the caller a retry would repeat output: the agent loop asks again instead.
      if (!retryable || delivered || continuation > 0 || retry >= settings.maxRetries || wait > settings.maxDelayMs) {
        if (usage) yield { type: 'usage', usage }
        return yield { type: 'finish', reason: 'error', error }
      }
      logger.info('%s (retry %d of %d in %d ms)', error.message, retry + 1, settings.maxRetries, wait)
      options.onRetry?.({ attempt: retry + 1, of: settings.maxRetries, waitMs: wait, error })
      await delay(wait, { signal }).catch(() => {})
    }
    if (!decoder) return yield aborted()
    usage = addUsage(usage, toUsage(decoder.usage))
    toolCalls += decoder.toolCalls
    const reason = decoder.stopReason
    if (reason === 'refusal') refusal = decoder.refusal()
    if (reason === 'pause_turn' && continuation < settings.maxContinuations && decoder.content.length) {
      logger.debug('%s: pause_turn, continuing (%d of %d)', settings.name, continuation + 1, settings.maxContinuations)
      body = { ...body, messages: [...body.messages, { role: 'assistant', content: decoder.content }] }
      continue
    }
    yield { type: 'usage', usage }
    return yield finishFor(settings.name, reason, toolCalls, refusal)
  }
}

function finishFor(name: string, reason: string | undefined, toolCalls: number, refusal: string): ModelChunk {
  switch (reason) {
    case 'refusal': {
      const error: ModelError = { code: 'REFUSED', message: `${name}: the model refused${refusal ? `: ${refusal}` : ''}` }
      return { type: 'finish', reason: 'error', error }
    }
    case 'max_tokens':
      return { type: 'finish', reason: 'max-tokens' }
    default:
      // end_turn, stop_sequence, tool_use, a pause_turn past the continuation limit, and reasons added later:
      // the calls made are what matters.
      return { type: 'finish', reason: toolCalls ? 'tool-calls' : 'stop' }
  }
}

/** One HTTP request: its chunks as they arrive, then `done` with the decoder, or a failure. */
async function* attempt(client: Anthropic, settings: ProviderSettings, body: RequestBody, signal: AbortSignal): AsyncGenerator<AttemptEvent> {
  const masker = maskerFor(settings)
  // One controller for the caller's abort and the idle timeout, so either closes the socket at once.
  const controller = new AbortController()
  const onAbort = () => controller.abort(signal.reason)
  signal.addEventListener('abort', onAbort, { once: true })
  let idle: NodeJS.Timeout | undefined
  let idled = false
  const arm = () => {
    clearTimeout(idle)
    idle = setTimeout(() => { idled = true; controller.abort() }, settings.idleTimeoutMs)
  }
  const decoder = new StreamDecoder(settings.name)
  try {
    let stream: AsyncIterable<unknown>
    try {
      stream = await client.messages.create({ ...body, stream: true } as unknown as Anthropic.MessageCreateParamsStreaming, { signal: controller.signal })
    } catch (error) {
      return yield { kind: 'failed', failure: describeFailure(settings, error, masker, signal.aborted) }
    }
    arm()
    try {
      for await (const event of stream) {
        arm()
        const result = decoder.decode(event)
        if (!Array.isArray(result)) return yield { kind: 'failed', failure: { error: result, retryable: false } }
        for (const chunk of result) yield { kind: 'chunk', chunk }
        if (decoder.stopped) break
      }
    } catch (error) {
      if (!idled) return yield { kind: 'failed', failure: describeFailure(settings, error, masker, signal.aborted) }
    }
    if (signal.aborted) return yield { kind: 'failed', failure: failure('ABORTED', `${settings.name}: request aborted`, false) }
    if (idled) return yield { kind: 'failed', failure: failure('TRANSPORT', `${settings.name}: no data from ${settings.host} for ${settings.idleTimeoutMs} ms`) }
    // A message whose stop reason arrived is complete even if message_stop was lost.
    if (!decoder.stopped && decoder.stopReason === undefined) {
      return yield { kind: 'failed', failure: failure('TRANSPORT', `${settings.name}: the stream ended before the answer was complete`) }
    }
    yield { kind: 'done', decoder }
  } finally {
    clearTimeout(idle)
    signal.removeEventListener('abort', onAbort)
    // Also when the caller stops iterating early: the socket must not outlive the request.
    controller.abort()
  }
}
