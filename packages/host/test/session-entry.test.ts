import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import * as host from '../src/index.ts'
import { writeYml, useFixtures } from '@goalkeeper/test-kit'

const fixtures = useFixtures()
const keyFile = JSON.stringify(path.join(os.tmpdir(), 'goalkeeper-tests', 'session.key'))
const quiet = { write: () => true }

describe('a session entry of cordis.yml', () => {
  it('brings the JSONL store its dir names, or keeps the store an entry above it provides', async () => {
    const own = path.join(fixtures.dir, 'own')
    await writeYml(fixtures.dir, `- id: session\n  name: '@goalkeeper/session'\n  config: { dir: ${JSON.stringify(own)}, keyFile: ${keyFile} }\n`)
    const single = await host.startApp({ cwd: fixtures.dir, env: {}, stderr: quiet })
    expect(single.report.ok).toBe(true)
    expect(single.ctx.get('sessions')!.dir).toBe(own)
    await single.shutdown()

    const above = path.join(fixtures.dir, 'above')
    await writeYml(fixtures.dir, `- id: store\n  name: '@goalkeeper/session-jsonl'\n  config: { dir: ${JSON.stringify(above)} }\n- id: session\n  name: '@goalkeeper/session'\n  config: { keyFile: ${keyFile} }\n`)
    const composed = await host.startApp({ cwd: fixtures.dir, env: {}, stderr: quiet })
    expect(composed.report.ok).toBe(true)
    expect(composed.ctx.get('sessions')!.dir).toBe(above)
    // One store: the session entry loaded none of its own beside the one above it.
    const made = await composed.ctx.get('sessions')!.create({ cwd: fixtures.dir })
    expect(made.file).toBe(path.join(above, `${made.id}.jsonl`))
    await composed.ctx.get('sessions')!.close(made)
    await composed.shutdown()
  })

  it('refuses dir or database beside a store entry above it, naming the conflict', async () => {
    await writeYml(fixtures.dir, `- id: store\n  name: '@goalkeeper/session-jsonl'\n  config: { dir: ${JSON.stringify(path.join(fixtures.dir, 'a'))} }\n- id: session\n  name: '@goalkeeper/session'\n  config: { dir: ${JSON.stringify(path.join(fixtures.dir, 'b'))}, keyFile: ${keyFile} }\n`)
    const app = await host.startApp({ cwd: fixtures.dir, env: {}, stderr: quiet })
    expect(app.report.ok).toBe(false)
    expect(app.report.entries.find((entry) => entry.id === 'session')?.error).toContain('an entry above it already provides the session store')
    expect(app.ctx.get('sessions')).toBeUndefined()
    await app.shutdown()
  })
})
