import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { Context } from 'cordis'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import * as model from '../src/index.ts'
import type { ModelProvider, ScriptedProvider } from '../src/index.ts'
import { collect, textOf } from './helpers.ts'

const fake = (): ModelProvider => ({ async *stream() { yield { type: 'finish', reason: 'stop' } } })

let root: Context
let dir: string
beforeEach(async () => {
  root = new Context()
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gk-'))
})
afterEach(async () => {
  await root.fiber.dispose()
  await fs.rm(dir, { recursive: true, force: true })
})

describe('ctx.models', () => {
  it('always registers the scripted provider', async () => {
    await root.plugin(model, { scripted: { script: [{ text: 'hello' }] } })
    expect(root.models.list()).toEqual(['scripted'])
    const scripted = root.models.get('scripted') as ScriptedProvider
    expect(scripted.remaining).toBe(1)
    expect(textOf(await collect(scripted))).toBe('hello')
  })

  it('the scripted provider reports the context window of its config, which a test may change', async () => {
    await root.plugin(model, { scripted: { contextWindow: 4096 } })
    const scripted = root.models.get('scripted') as ScriptedProvider
    expect(scripted.contextWindow()).toBe(4096)
    scripted.setContextWindow(undefined)
    expect(scripted.contextWindow()).toBeUndefined()
    expect(() => scripted.setContextWindow(0)).toThrow('scripted contextWindow must be a positive integer, got 0')
  })

  it('removes a provider when the plugin that registered it is unloaded', async () => {
    await root.plugin(model, {})
    const provider = fake()
    const fiber = await root.plugin({ name: 'other', inject: ['models'], apply: (ctx: Context) => { ctx.models.register('fake', provider) } })
    expect(root.models.get('fake')).toBe(provider)
    expect(root.models.list()).toEqual(['scripted', 'fake'])
    await fiber.dispose()
    expect(root.models.get('fake')).toBeUndefined()
    expect(root.models.list()).toEqual(['scripted'])
  })

  it('returns a disposer that unregisters', async () => {
    await root.plugin(model, {})
    const dispose = root.models.register('fake', fake())
    expect(root.models.list()).toContain('fake')
    dispose()
    expect(root.models.list()).not.toContain('fake')
    // The name is free again.
    root.models.register('fake', fake())
    expect(root.models.list()).toContain('fake')
  })

  it('describes a provider by what it says about itself, or by its name', async () => {
    await root.plugin(model, {})
    const remote: ModelProvider = { ...fake(), describe: () => ({ summary: 'acme at api.acme.test', offline: false, host: 'api.acme.test' }) }
    root.models.register('acme', remote)
    root.models.register('plain', fake())
    expect(root.models.describe('scripted')).toEqual({ summary: 'scripted answers replayed in-process (offline)', offline: true })
    expect(root.models.describe('acme')).toEqual({ summary: 'acme at api.acme.test', offline: false, host: 'api.acme.test' })
    expect(root.models.describe('plain')).toEqual({ summary: 'plain', offline: false })
    expect(root.models.describe('absent')).toBeUndefined()
  })

  it('keeps the providers that are off with what switches them on, until their plugin is unloaded', async () => {
    await root.plugin(model, {})
    const fiber = await root.plugin({
      name: 'off',
      inject: ['models'],
      apply: (ctx: Context) => {
        ctx.models.standby('acme', { reason: 'ACME_API_KEY is unset', enableWith: ['ACME_API_KEY'] })
      },
    })
    const dispose = root.models.standby('acme', { reason: 'a second entry', enableWith: ['ACME_API_KEY', 'OTHER_KEY'] })
    expect(root.models.standbys()).toEqual([
      { name: 'acme', reason: 'ACME_API_KEY is unset', enableWith: ['ACME_API_KEY'] },
      { name: 'acme', reason: 'a second entry', enableWith: ['ACME_API_KEY', 'OTHER_KEY'] },
    ])
    // Standing by registers nothing.
    expect(root.models.list()).toEqual(['scripted'])
    await fiber.dispose()
    expect(root.models.standbys().map((item) => item.reason)).toEqual(['a second entry'])
    dispose()
    expect(root.models.standbys()).toEqual([])
  })

  it('refuses duplicate names and malformed providers with clear errors', async () => {
    await root.plugin(model, {})
    expect(() => root.models.register('scripted', fake())).toThrow(/model provider "scripted" is already registered/)
    expect(() => root.models.register('', fake())).toThrow(/non-empty string/)
    expect(() => root.models.register('x', {} as ModelProvider)).toThrow(/stream\(request, signal\)/)
    expect(root.models.list()).toEqual(['scripted'])
  })

  it('pick returns the first registered preference', async () => {
    await root.plugin(model, {})
    root.models.register('openai', fake())
    expect(root.models.pick(['deepseek', 'openai', 'scripted'])).toBe('openai')
    expect(root.models.pick(['scripted', 'openai'])).toBe('scripted')
    expect(root.models.pick(['deepseek'])).toBeUndefined()
    expect(root.models.pick([])).toBeUndefined()
  })

  it('fails to load with a clear message when the script is malformed', async () => {
    await expect(root.plugin(model, { scripted: { script: [{ text: 'ok' }, { kind: 'hng' }] } })).rejects.toThrow(/scripted\.script\[1\]: unknown kind "hng"/)
  })
})

describe('scripted script modules', () => {
  it('loads a step array (including function steps) from a module relative to the cwd, after the inline script', async () => {
    const file = path.join(dir, 'script.mjs')
    await fs.writeFile(file, `export default [
      { text: 'from module' },
      (request) => ({ text: 'saw ' + request.messages.length + ' message(s)' }),
    ]\n`)
    await root.plugin(model, { scripted: { script: [{ text: 'inline' }], module: path.relative(process.cwd(), file) } })
    const scripted = root.models.get('scripted') as ScriptedProvider
    expect(scripted.remaining).toBe(3)
    expect(textOf(await collect(scripted))).toBe('inline')
    expect(textOf(await collect(scripted))).toBe('from module')
    expect(textOf(await collect(scripted))).toBe('saw 1 message(s)')
  })

  it('accepts a default export that is a function returning the steps', async () => {
    const file = path.join(dir, 'factory.mjs')
    await fs.writeFile(file, `export default async () => [{ kind: 'error', code: 'AUTH', message: 'bad key' }]\n`)
    await root.plugin(model, { scripted: { module: file } })
    const [finish] = await collect(root.models.get('scripted')!)
    expect(finish).toEqual({ type: 'finish', reason: 'error', error: { code: 'AUTH', message: 'bad key' } })
  })

  it('reports a missing module or a wrong export clearly', async () => {
    await expect(root.plugin(model, { scripted: { module: path.join(dir, 'missing.mjs') } })).rejects.toThrow(/cannot load script module .*missing\.mjs/)
    const file = path.join(dir, 'object.mjs')
    await fs.writeFile(file, 'export default { text: "not an array" }\n')
    await expect(root.plugin(model, { scripted: { module: file } })).rejects.toThrow(/must be an array of script steps/)
    const bad = path.join(dir, 'bad-step.mjs')
    await fs.writeFile(bad, 'export default [{ text: 1 }]\n')
    await expect(root.plugin(model, { scripted: { module: bad } })).rejects.toThrow(/\[0\]: "text" must be a string/)
  })
})
