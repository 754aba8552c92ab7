import { afterEach, describe, expect, it } from 'vitest'
import { Context, Logger, type Message } from 'cordis'
import * as modelPlugin from '@goalkeeper/model'
import * as openaiPlugin from '../src/index.ts'
import { collect, jsonError, request, startServer, textReply } from './fake-server.ts'

const ENV_KEY = 'sk-env-9f8e7d6c5b4a39281706SECRET'

let server: Awaited<ReturnType<typeof startServer>> | undefined
const savedEnv = { ...process.env }
afterEach(async () => {
  await server?.close()
  server = undefined
  process.env = { ...savedEnv }
})

const compose = async () => {
  const root = new Context()
  const logs: string[] = []
  const exporter = { levels: { default: 3 }, export: (message: Message) => logs.push(`${message.type} ${message.name} ${Logger.format(exporter, message)}`) }
  root.logger.exporter(exporter)
  await root.plugin(modelPlugin)
  return { root, logs }
}

describe('context window', () => {
  it('is the preset\'s for its own model, unknown for another model or a custom endpoint, and the config wins', () => {
    const window = (config: Record<string, unknown>) => {
      const resolution = openaiPlugin.resolveSettings(openaiPlugin.Config({ apiKey: 'sk-test', ...config }), {})
      if (resolution.kind !== 'on') throw new Error('off')
      return openaiPlugin.createOpenAIProvider(resolution.settings, { debug() {}, info() {} })
    }
    expect(window({ preset: 'deepseek' }).contextWindow?.()).toBe(128_000)
    expect(window({ preset: 'openai' }).contextWindow?.('gpt-4o-mini')).toBe(128_000)
    expect(window({ preset: 'openai' }).contextWindow?.('o3')).toBeUndefined()
    expect(window({ preset: 'deepseek', model: 'deepseek-reasoner' }).contextWindow?.()).toBeUndefined()
    expect(window({ preset: 'custom', baseUrl: 'http://127.0.0.1:1', model: 'qwen' }).contextWindow?.()).toBeUndefined()
    expect(window({ preset: 'custom', baseUrl: 'http://127.0.0.1:1', model: 'qwen', contextWindow: 32_768 }).contextWindow?.()).toBe(32_768)
  })
})

describe('plugin', () => {
  it('registers nothing and logs one info line when the preset key is unset', async () => {
    delete process.env.DEEPSEEK_API_KEY
    const { root, logs } = await compose()
    await root.plugin(openaiPlugin, { preset: 'deepseek' })
    expect(root.models.list()).toEqual(['scripted'])
    const lines = logs.filter((line) => line.includes('model-openai'))
    expect(lines).toEqual(['info model-openai provider deepseek is off: DEEPSEEK_API_KEY is unset'])
    // ctx.models knows it is off and what would switch a real model on: its own variable first.
    expect(root.models.standbys()).toEqual([{ name: 'deepseek', reason: 'DEEPSEEK_API_KEY is unset', enableWith: ['DEEPSEEK_API_KEY', 'OPENAI_API_KEY'] }])
    await root.plugin(openaiPlugin, { preset: 'openai', apiKeyEnv: 'GK_TEST_UNSET_KEY' })
    expect(root.models.standbys()[1]).toEqual({ name: 'openai', reason: 'GK_TEST_UNSET_KEY is unset', enableWith: ['GK_TEST_UNSET_KEY', 'DEEPSEEK_API_KEY', 'OPENAI_API_KEY'] })
    await root.fiber.dispose()
  })

  it('reads the preset key from the environment at load time and sends it as a Bearer header', async () => {
    process.env.DEEPSEEK_API_KEY = ENV_KEY
    server = await startServer([textReply('hi')])
    const { root, logs } = await compose()
    const fiber = await root.plugin(openaiPlugin, { preset: 'deepseek', baseUrl: server.url })
    expect(root.models.pick(['deepseek', 'openai', 'scripted'])).toBe('deepseek')
    expect(root.models.describe('deepseek')).toEqual({
      summary: `deepseek at ${new URL(server.url).host}, key from DEEPSEEK_API_KEY`,
      offline: false,
      host: new URL(server.url).host,
      vendor: 'deepseek',
      model: 'deepseek-chat',
      keyEnv: 'DEEPSEEK_API_KEY',
    })
    expect(root.models.standbys()).toEqual([])
    const chunks = await collect(root.models.get('deepseek')!.stream(request(), new AbortController().signal))
    expect(chunks).toEqual([{ type: 'text', text: 'hi' }, { type: 'finish', reason: 'stop' }])
    expect(server.received[0].headers.authorization).toBe(`Bearer ${ENV_KEY}`)
    expect(server.received[0].body.model).toBe('deepseek-chat')
    expect(logs.join('\n')).not.toContain(ENV_KEY)
    await fiber.dispose()
    expect(root.models.list()).toEqual(['scripted'])
    await root.fiber.dispose()
  })

  it('uses apiKeyEnv to name another variable, and the openai preset sends max_completion_tokens', async () => {
    delete process.env.OPENAI_API_KEY
    process.env.GK_TEST_OPENAI_KEY = ENV_KEY
    server = await startServer([textReply('hi')])
    const { root } = await compose()
    await root.plugin(openaiPlugin, { preset: 'openai', apiKeyEnv: 'GK_TEST_OPENAI_KEY', baseUrl: server.url, maxTokens: 100 })
    await collect(root.models.get('openai')!.stream(request(), new AbortController().signal))
    expect(server.received[0].body).toMatchObject({ model: 'gpt-4o-mini', max_completion_tokens: 100 })
    expect(server.received[0].headers.authorization).toBe(`Bearer ${ENV_KEY}`)
    await root.fiber.dispose()
  })

  it('registers a custom endpoint without a key under its configured name', async () => {
    server = await startServer([textReply('local')])
    const { root } = await compose()
    await root.plugin(openaiPlugin, { preset: 'custom', name: 'ollama', baseUrl: server.url + '/', model: 'qwen2.5-coder' })
    const chunks = await collect(root.models.get('ollama')!.stream(request(), new AbortController().signal))
    expect(chunks[0]).toEqual({ type: 'text', text: 'local' })
    expect(server.received[0].url).toBe('/v1/chat/completions')
    expect(server.received[0].headers).not.toHaveProperty('authorization')
    expect(root.models.describe('ollama')).toEqual({ summary: `ollama at ${new URL(server.url).host}, no key`, offline: false, host: new URL(server.url).host, vendor: 'ollama', model: 'qwen2.5-coder' })
    await root.fiber.dispose()
  })

  it('fails to load with a clear error when a custom preset lacks baseUrl or model', async () => {
    const { root } = await compose()
    await expect(root.plugin(openaiPlugin, { preset: 'custom', model: 'm' })).rejects.toThrow('model-openai (openai-compatible): the custom preset needs `baseUrl`')
    await expect(root.plugin(openaiPlugin, { preset: 'custom', baseUrl: 'http://127.0.0.1:1/v1' })).rejects.toThrow('the custom preset needs `model`')
    await expect(root.plugin(openaiPlugin, { preset: 'custom', baseUrl: 'file:///etc', model: 'm' })).rejects.toThrow('must be http or https')
    // A zero timeout would fail every request at once, far from the config that caused it.
    await expect(root.plugin(openaiPlugin, { preset: 'custom', baseUrl: 'http://127.0.0.1:1/v1', model: 'm', idleTimeoutMs: 0 })).rejects.toThrow(/idleTimeoutMs/)
    await expect(root.plugin(openaiPlugin, { preset: 'custom', baseUrl: 'http://127.0.0.1:1/v1', model: 'm', requestTimeoutMs: 0 })).rejects.toThrow(/requestTimeoutMs/)
    expect(root.models.list()).toEqual(['scripted'])
    await root.fiber.dispose()
  })

  it('refuses a baseUrl carrying credentials, without repeating them in the error or the logs', async () => {
    const { root, logs } = await compose()
    for (const baseUrl of ['http://user:hunter2-pass@127.0.0.1:1/v1', 'https://hunter2-token@api.example.com/v1']) {
      const load = root.plugin(openaiPlugin, { preset: 'custom', baseUrl, model: 'm' })
      await expect(load).rejects.toThrow('`baseUrl` must not contain credentials')
      await expect(load).rejects.not.toThrow(/hunter2/)
    }
    expect(root.models.list()).toEqual(['scripted'])
    expect(logs.join('\n')).not.toContain('hunter2')
    await root.fiber.dispose()
  })

  it('keeps the key out of logs and error messages, even when the server echoes it', async () => {
    server = await startServer([
      jsonError(500, { error: { message: `upstream saw key ${ENV_KEY}` } }),
      jsonError(401, { error: { message: `Incorrect API key provided: ${ENV_KEY}` } }),
    ])
    const { root, logs } = await compose()
    await root.plugin(openaiPlugin, { preset: 'openai', apiKey: ENV_KEY, baseUrl: server.url, baseDelayMs: 1 })
    const chunks = await collect(root.models.get('openai')!.stream(request(), new AbortController().signal))
    expect(chunks).toEqual([{ type: 'finish', reason: 'error', error: { code: 'AUTH', message: 'openai: HTTP 401: Incorrect API key provided: ***' } }])
    expect(server.received[0].headers.authorization).toBe(`Bearer ${ENV_KEY}`)
    const text = logs.join('\n')
    expect(text).toContain('openai: HTTP 500: upstream saw key ***')
    expect(text).not.toContain(ENV_KEY)
    expect(text).not.toContain(ENV_KEY.slice(6))
    // The description says where the key came from, never what it is.
    expect(root.models.describe('openai')?.summary).toBe(`openai at ${new URL(server.url).host}, key from the config`)
    expect(JSON.stringify(root.models.describe('openai'))).not.toContain(ENV_KEY)
    await root.fiber.dispose()
  })
})
