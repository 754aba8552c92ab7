import { clip, type Masker } from '@goalkeeper/kit'
import type { ModelChunk } from '@goalkeeper/model'
import { createParser } from 'eventsource-parser'
import { maskerFor, type ProviderSettings } from './config.ts'
import { StreamDecoder } from './stream-decoder.ts'
import type { Exchange } from './exchange.ts'
import { excerpt, failure, streamedFailure, type AttemptFailure } from './errors.ts'

/** `frames`: how many stream events had arrived when it failed (for the `broken` notice). */
export type AttemptEvent = { kind: 'chunk'; chunk: ModelChunk } | { kind: 'failed'; failure: AttemptFailure; frames?: number }

// Guards memory against a server that never ends a line.
const MAX_SSE_BUFFER = 8 * 1024 * 1024
/** How much of a body without events is kept, to explain what the server sent instead. */
const MAX_KEPT_BODY = 64 * 1024
/** Blank lines, comments and the SSE fields: a body made only of these is an (empty) event stream. */
const SSE_LINE = /^(:.*|(data|event|id|retry)(:.*)?)?$/

const isEventStream = (body: string) => body.split(/\r\n|\r|\n/).every((line) => SSE_LINE.test(line))

/** The SSE events of a 200 response as chunks, ending with the closing chunks or a failure. */
export async function* readStream(settings: ProviderSettings, exchange: Exchange, response: Response, signal: AbortSignal): AsyncGenerator<AttemptEvent> {
  const masker = maskerFor(settings)
  const decoder = new StreamDecoder(settings.name, masker)
  const pending: string[] = []
  let events = 0
  let overflow = false
  let kept = ''
  const parser = createParser({
    onEvent: (event) => {
      events += 1
      pending.push(event.data)
    },
    onError: (error) => {
      overflow ||= error.type === 'max-buffer-size-exceeded'
    },
    maxBufferSize: MAX_SSE_BUFFER,
  })
  try {
    for await (const text of exchange.text(response)) {
      if (!events && kept.length < MAX_KEPT_BODY) kept += text.slice(0, MAX_KEPT_BODY - kept.length)
      parser.feed(text)
      // The same bytes would come again: not retried.
      if (overflow) return yield { kind: 'failed', failure: failure('SERVER', `${settings.name}: a stream event exceeded ${MAX_SSE_BUFFER / 1024 / 1024} MiB`, false) }
      while (pending.length) {
        const result = decoder.decode(pending.shift()!)
        if (result.kind === 'failed') return yield { kind: 'failed', failure: result.failure, frames: events }
        for (const chunk of result.chunks) yield { kind: 'chunk', chunk }
        if (decoder.done) break
      }
      if (decoder.done) break
    }
  } catch (error) {
    // A server that sent its finish reason but then hangs or drops the socket still gave a full answer.
    if (signal.aborted || !decoder.finished) return yield { kind: 'failed', failure: exchange.describe(error), frames: events }
  }
  if (!events && !isEventStream(kept)) {
    return yield { kind: 'failed', failure: bodyFailure(settings.name, kept, response.headers.get('content-type'), masker) }
  }
  const end = decoder.end()
  if (end.kind === 'failed') return yield { kind: 'failed', failure: end.failure }
  for (const chunk of end.chunks) yield { kind: 'chunk', chunk }
}

/**
 * A 200 body that is not an event stream: an error object (some servers report errors this way),
 * or something else entirely, such as a proxy's login page. Neither gets better with a retry.
 */
const bodyFailure = (provider: string, body: string, contentType: string | null, masker: Masker): AttemptFailure => {
  try {
    const parsed = JSON.parse(body) as { error?: unknown }
    if (parsed?.error) return streamedFailure(provider, parsed, masker)
  } catch {
    // not JSON: described below
  }
  const type = contentType ? clip(masker.mask(contentType), 100) : 'no content type'
  return failure('SERVER', `${provider}: the server answered with ${type} instead of an event stream: ${excerpt(body, masker) || '(empty body)'}`, false)
}

/** A server that ignores `stream: true`, or reports an error as a 200 JSON body. */
export const unstreamedFailure = async (settings: ProviderSettings, exchange: Exchange, response: Response): Promise<AttemptFailure> => {
  let body = ''
  try {
    body = await exchange.readAll(response)
  } catch (error) {
    return exchange.describe(error)
  }
  return bodyFailure(settings.name, body, response.headers.get('content-type'), maskerFor(settings))
}
