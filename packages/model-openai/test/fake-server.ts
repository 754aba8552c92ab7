import { format as printf } from 'node:util'
import type { ModelChunk, ModelError, ModelRequest, ModelStreamNotice } from '@goalkeeper/model'
import { Config, resolveSettings, type ProviderSettings } from '../src/config.ts'
import { createOpenAIProvider } from '../src/provider.ts'

export { delta, frame, jsonError, sse, startServer, startSse, textReply, usageFrame, type Handler, type Received } from '@goalkeeper/test-kit'
import { collectChunks as collect, modelRequest as request, useOpenAIServers, type Handler, type OpenAIServer } from '@goalkeeper/test-kit'

export { collect, request }

/** Paces a scripted server (it shapes traffic; tests never wait for an outcome this way). */
export const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Puts separate writes into separate TCP segments. */
export const tick = () => pause(5)

export const TEST_KEY = 'sk-test-0123456789abcdefSECRET'

export const settingsFor = (url: string, overrides: Record<string, unknown> = {}): ProviderSettings => {
  const resolution = resolveSettings(Config({ preset: 'custom', baseUrl: url, model: 'test-model', apiKey: TEST_KEY, baseDelayMs: 5, maxDelayMs: 2000, ...overrides }), {})
  if (resolution.kind !== 'on') throw new Error('test settings resolved to off')
  return resolution.settings
}

export interface LogLine { level: string; text: string }

export const providerFor = (url: string, overrides: Record<string, unknown> = {}) => {
  const logs: LogLine[] = []
  const waiters: { pattern: RegExp; resolve: () => void }[] = []
  const push = (level: string, f: unknown, args: unknown[]) => {
    const line = { level, text: printf(f, ...args) }
    logs.push(line)
    for (const waiter of waiters) if (waiter.pattern.test(line.text)) waiter.resolve()
  }
  const logger = {
    debug: (f: unknown, ...args: unknown[]) => push('debug', f, args),
    info: (f: unknown, ...args: unknown[]) => push('info', f, args),
  }
  /** What the provider told through `onStream`, in order. */
  const notices: ModelStreamNotice[] = []
  const provider = createOpenAIProvider(settingsFor(url, overrides), logger, { random: () => 0.5, onStream: (notice) => void notices.push(notice) })
  /** Resolves when a log line matching `pattern` is written. */
  const logged = (pattern: RegExp) => new Promise<void>((resolve) => waiters.push({ pattern, resolve }))
  return { provider, logs, logged, notices }
}

export const lastOf = (chunks: ModelChunk[]) => chunks[chunks.length - 1]

export type TestServer = OpenAIServer

/** A per-test server factory; every server it started is closed after each test. */
export const useServers = useOpenAIServers

/** Starts a server, streams one default request through a provider pointed at it, collects everything. */
export const runOnce = async (serve: ReturnType<typeof useServers>, handlers: Handler[], overrides: Record<string, unknown> = {}) => {
  const server = await serve(handlers)
  const { provider, logs } = providerFor(server.url, overrides)
  const chunks = await collect(provider.stream(request(), new AbortController().signal))
  return { chunks, logs, received: server.received, finish: lastOf(chunks) as Extract<ModelChunk, { type: 'finish' }> & { error: ModelError } }
}
