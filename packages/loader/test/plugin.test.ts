import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import * as loader from '../src/index.ts'
import { writeYml, useFixtures } from '@goalkeeper/test-kit'

const fixtures = useFixtures()

describe('loader plugin', () => {
  it('loads a nested cordis.yml into its own fiber and unloads it with the fiber', async () => {
    const { file } = await writeYml(fixtures.dir, '- id: inner\n  name: ./counter.mjs\n  config: { label: inner }\n', 'nested.yml')
    const root = new Context()
    const fiber = await root.plugin(loader, { file })
    expect(fixtures.probe.applies).toEqual({ inner: 1 })
    await fiber.dispose()
    expect(fixtures.probe.log).toEqual(['apply inner', 'dispose-start inner', 'dispose-end inner'])
  })
})

describe('compositionFileOf', () => {
  it('tells an entry (and what it starts) the cordis.yml it came from, and a plugin started from code nothing', async () => {
    const seen: (string | undefined)[] = []
    const probe = { name: 'probe', apply: (ctx: Context) => { seen.push(loader.compositionFileOf(ctx)); ctx.plugin({ name: 'inner', apply: (inner: Context) => void seen.push(loader.compositionFileOf(inner)) }) } }
    const { file } = await writeYml(fixtures.dir, '- id: p\n  name: probe\n', 'source.yml')
    const root = new Context()
    const composition = new loader.Loader(root, { file, builtins: { probe: async () => probe } })
    expect((await composition.load()).ok).toBe(true)
    await root.plugin(probe)
    expect(seen).toEqual([file, file, undefined, undefined])
    await composition.dispose()
  })
})
