import path from 'node:path'
import { describe, expect, it } from 'vitest'
import * as host from '../src/index.ts'
import { writeYml, useFixtures } from '@goalkeeper/test-kit'

const fixtures = useFixtures()

describe('startApp', () => {
  it('loads the composition; its shutdown is ordered and its log lines still reach the exporter', async () => {
    await writeYml(fixtures.dir, '- id: a\n  name: ./counter.mjs\n  config: { label: a }\n- id: b\n  name: ./counter.mjs\n  config: { label: b }\n')
    const chunks: string[] = []
    const app = await host.startApp({ cwd: fixtures.dir, logLevel: 'debug', env: {}, stderr: { write: (text: string) => chunks.push(text) } })
    expect(app.report.ok).toBe(true)
    expect(app.loader.file).toBe(path.join(fixtures.dir, 'cordis.yml'))

    await Promise.all([app.shutdown(), app.shutdown(), app.closed])
    expect(fixtures.probe.log.filter((line) => line.startsWith('dispose-end'))).toEqual(['dispose-end b', 'dispose-end a'])
    const text = chunks.join('')
    expect(text.indexOf('[D] loader unloaded entry "b"')).toBeGreaterThan(-1)
    expect(text.indexOf('[D] loader unloaded entry "a"')).toBeGreaterThan(text.indexOf('[D] loader unloaded entry "b"'))
    expect(app.ctx.fiber.state).toBe(4)
  })

  it('fails with a HostError naming the file when it is missing', async () => {
    const start = host.startApp({ cwd: fixtures.dir, config: 'absent.yml', stderr: { write: () => true } })
    await expect(start).rejects.toBeInstanceOf(host.HostError)
    await expect(start).rejects.toThrow(`cannot read ${path.join(fixtures.dir, 'absent.yml')}`)
  })
})
