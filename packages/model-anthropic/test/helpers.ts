import { afterEach } from 'vitest'
import { format as printf } from 'node:util'
import type { ModelChunk, ModelRequest, ModelRetryInfo } from '@goalkeeper/model'
import { collectChunks as collect, modelRequest as request, startReplayServer, type ReplayServer, type Reply } from '@goalkeeper/test-kit'
import { Config, resolveSettings, type ProviderSettings } from '../src/config.ts'
import { createAnthropicProvider } from '../src/provider.ts'

export { collect, request }

export const TEST_KEY = 'sk-ant-test-0123456789abcdefSECRET'

/** Settings for a provider pointed at `url`; with `env`, the key comes from there instead of the config. */
export const settingsFor = (url: string, overrides: Record<string, unknown> = {}, env?: NodeJS.ProcessEnv): ProviderSettings => {
  const resolution = resolveSettings(Config({ baseUrl: url, ...(env ? {} : { apiKey: TEST_KEY }), baseDelayMs: 5, maxDelayMs: 2000, ...overrides }), env ?? {})
  if (resolution.kind !== 'on') throw new Error('test settings resolved to off')
  return resolution.settings
}

export const providerFor = (url: string, overrides: Record<string, unknown> = {}, env?: NodeJS.ProcessEnv) => {
  const logs: string[] = []
  const retries: ModelRetryInfo[] = []
  const log = (format: unknown, ...args: unknown[]) => void logs.push(printf(format, ...args))
  const provider = createAnthropicProvider(settingsFor(url, overrides, env), { debug: log, info: log }, { random: () => 0.5, onRetry: (retry) => retries.push(retry) })
  return { provider, logs, retries }
}

export type Finish = Extract<ModelChunk, { type: 'finish' }>

export const finishOf = (chunks: ModelChunk[]) => chunks[chunks.length - 1] as Finish
export const textOf = (chunks: ModelChunk[]) => chunks.flatMap((chunk) => (chunk.type === 'text' ? [chunk.text] : [])).join('')

/** Replay servers started in a test, closed after it. */
export const useReplay = () => {
  const open: ReplayServer[] = []
  afterEach(async () => {
    await Promise.all(open.splice(0).map((server) => server.close()))
  })
  return async (replies: Reply[], countReply?: Reply) => {
    const server = await startReplayServer(replies, countReply)
    open.push(server)
    return server
  }
}

/** One request through a provider pointed at a fresh replay server. */
export const runOnce = async (serve: ReturnType<typeof useReplay>, replies: Reply[], overrides: Record<string, unknown> = {}, req: ModelRequest = request()) => {
  const server = await serve(replies)
  const { provider, logs, retries } = providerFor(server.url, overrides)
  const chunks = await collect(provider.stream(req, new AbortController().signal))
  return { server, chunks, logs, retries, finish: finishOf(chunks) }
}
