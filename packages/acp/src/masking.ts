import type { AnyMessage, Stream } from '@agentclientprotocol/sdk'

/**
 * Requests whose strings are a file's content, not text for a person: they must reach the client as the
 * tool wrote them (the workspace tools write files unmasked too), so they pass unchanged.
 */
const VERBATIM_METHODS = new Set(['fs/write_text_file'])

/** `value` with `mask` applied to every string in it (keys stay as they are). */
export function maskStrings(value: unknown, mask: (text: string) => string): unknown {
  if (typeof value === 'string') return mask(value)
  if (Array.isArray(value)) return value.map((item) => maskStrings(item, mask))
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const [key, item] of Object.entries(value)) out[key] = maskStrings(item, mask)
    return out
  }
  return value
}

/**
 * The same stream, with every outgoing message masked for secrets before it is written: the one place
 * where everything a client sees (updates, responses, permission requests, errors) passes.
 */
export function maskedStream(stream: Stream, mask: (text: string) => string): Stream {
  const masking = new TransformStream<AnyMessage, AnyMessage>({
    transform(message, controller) {
      const verbatim = 'method' in message && VERBATIM_METHODS.has(message.method)
      controller.enqueue(verbatim ? message : maskStrings(message, mask) as AnyMessage)
    },
  })
  // A write that fails (the client went away) ends the pipe; the connection notices on its own side.
  masking.readable.pipeTo(stream.writable).catch(() => {})
  return { readable: stream.readable, writable: masking.writable }
}
