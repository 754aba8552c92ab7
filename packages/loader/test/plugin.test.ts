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
