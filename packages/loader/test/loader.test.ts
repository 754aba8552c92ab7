import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { formatReport, Loader, parseComposition } from '../src/index.ts'
import { buildReport } from '../src/report.ts'
import { captureContext, writeYml, useFixtures } from '@goalkeeper/test-kit'

const fixtures = useFixtures()

async function load(text: string, env: Record<string, string> = {}) {
  const { file, bytes } = await writeYml(fixtures.dir, text)
  const { root, logs } = captureContext()
  const loader = new Loader(root, { file, env })
  fixtures.loaders.push(loader)
  const report = await loader.load()
  return { loader, report, logs, file, bytes }
}

const statuses = (loader: Loader) => Object.fromEntries(loader.entries.map((entry) => [entry.id, entry.status]))

describe('loading cordis.yml', () => {
  it('loads a valid composition, resolving package names and relative paths from the file directory', async () => {
    const loaded: string[] = []
    const { file, bytes } = await writeYml(fixtures.dir, `
# a comment that must survive
- id: pkg
  name: '@fixture/counter'
  config: { label: pkg, maxSteps: 3 }
- id: local
  name: ./counter.mjs
  config:
    label: local
`)
    const { root } = captureContext()
    const loader = new Loader(root, { file, env: {} })
    fixtures.loaders.push(loader)
    loader.on('entry-loaded', (entry) => loaded.push(entry.id))
    const report = await loader.load()

    expect(report.ok).toBe(true)
    expect(report.loaded).toEqual(['pkg', 'local'])
    expect(loaded).toEqual(['pkg', 'local'])
    expect(fixtures.probe.configs.pkg).toEqual({ label: 'pkg', maxSteps: 3 })
    expect(fixtures.probe.applies).toEqual({ pkg: 1, local: 1 })
    expect(loader.get('pkg')?.fiber?.state).toBe(2)
    expect(await readFile(file)).toEqual(bytes)
  })

  it('reports invalid config with the entry id and the field path, and keeps the other entries running', async () => {
    const { loader, report, logs } = await load(`
- id: first
  name: ./counter.mjs
  config: { label: first }
- id: agent
  name: ./counter.mjs
  config: { label: agent, maxSteps: x }
- id: last
  name: ./counter.mjs
  config: { label: last }
`)
    const line = 'entry "agent": config.maxSteps: expected a number, got "x"'
    expect(report.ok).toBe(false)
    expect(report.failed).toEqual(['agent'])
    expect(report.loaded).toEqual(['first', 'last'])
    expect(loader.get('agent')?.error).toBe(line)
    expect(logs).toContain(`[error] loader ${line}`)
    expect(fixtures.probe.applies).toEqual({ first: 1, last: 1 })
  })

  it('reports a package that can not be found', async () => {
    const { report, loader } = await load(`
- id: ghost
  name: '@fixture/does-not-exist'
- id: ok
  name: ./counter.mjs
`)
    expect(report.failed).toEqual(['ghost'])
    expect(loader.get('ghost')?.error).toMatch(/^entry "ghost": name: cannot find package "@fixture\/does-not-exist" from /)
    expect(statuses(loader)).toEqual({ ghost: 'failed', ok: 'loaded' })
  })

  it('reports a plugin whose apply throws; Cordis\'s own error reaches the log too', async () => {
    const { report, loader, logs } = await load(`
- id: boom
  name: ./throws.mjs
- id: ok
  name: ./counter.mjs
`)
    expect(report.failed).toEqual(['boom'])
    expect(loader.get('boom')?.error).toBe('entry "boom": apply failed: boom in apply')
    expect(loader.get('boom')?.fiber).toBeUndefined()
    expect(logs.some((line) => line.startsWith('[error] throws') && line.includes('boom in apply'))).toBe(true)
    expect(statuses(loader).ok).toBe('loaded')
  })

  it('does not start a disabled entry', async () => {
    const { report, loader } = await load(`
- id: on
  name: ./counter.mjs
  config: { label: on }
- id: off
  name: ./counter.mjs
  disabled: true
  config: { label: off }
`)
    expect(report.ok).toBe(true)
    expect(report.disabled).toEqual(['off'])
    expect(fixtures.probe.applies).toEqual({ on: 1 })
    expect(loader.get('off')?.fiber).toBeUndefined()
  })

  it('injects environment values: inside strings, as exact typed values, with defaults and escapes', async () => {
    const { report, logs } = await load(`
- id: raw
  name: ./raw.mjs
  config:
    label: raw
    url: http://\${GK_HOST}:\${GK_PORT}/v1
    port: \${GK_PORT}
    verbose: \${GK_VERBOSE}
    model: \${GK_MODEL:-small}
    empty: \${GK_EMPTY:-fallback}
    literal: $\${GK_HOST}
    nested: [{ key: '\${GK_KEY}' }]
- id: toggled
  name: ./counter.mjs
  disabled: \${GK_DISABLE:-false}
  config: { label: toggled }
- id: missing
  name: ./raw.mjs
  config: { label: missing, token: '\${GK_NOT_SET}' }
`, { GK_HOST: 'localhost', GK_PORT: '8080', GK_VERBOSE: 'true', GK_EMPTY: '', GK_KEY: 'k-1' })
    expect(fixtures.probe.configs.raw).toEqual({
      label: 'raw',
      url: 'http://localhost:8080/v1',
      port: 8080,
      verbose: true,
      model: 'small',
      empty: 'fallback',
      literal: '${GK_HOST}',
      nested: [{ key: 'k-1' }],
    })
    expect(report.loaded).toEqual(['raw', 'toggled'])
    expect(report.failed).toEqual(['missing'])
    const line = 'entry "missing": config.token: environment variable GK_NOT_SET is not set (write ${GK_NOT_SET:-} to make it optional)'
    expect(logs).toContain(`[error] loader ${line}`)
    expect(fixtures.probe.configs.missing).toBeUndefined()
  })

  it('resolves YAML anchors and merge keys, so entries can share config', async () => {
    await load(`
- id: base
  name: ./raw.mjs
  config: &shared { label: base, retries: 2 }
- id: derived
  name: ./raw.mjs
  config: { <<: *shared, label: derived }
`)
    expect(fixtures.probe.configs.derived).toEqual({ label: 'derived', retries: 2 })
  })

  it('loads nested groups; a disabled group disables its entries', async () => {
    const { report, loader } = await load(`
- id: tools
  group: true
  config:
    - id: one
      name: ./counter.mjs
      config: { label: one }
    - id: inner
      group: true
      config:
        - id: two
          name: ./counter.mjs
          config: { label: two }
- id: guards
  group: true
  disabled: true
  config:
    - id: three
      name: ./counter.mjs
      config: { label: three }
- id: broken
  group: true
  config: { not: a list }
`)
    expect(report.loaded).toEqual(['one', 'two'])
    expect(report.disabled).toEqual(['three'])
    expect(loader.get('two')?.groups).toEqual(['tools', 'inner'])
    expect(statuses(loader)).toMatchObject({ tools: 'loaded', inner: 'loaded', guards: 'disabled', broken: 'failed' })
    expect(loader.get('broken')?.error).toBe('entry "broken": config: a group\'s config must be a list of entries, got a mapping')
    expect(fixtures.probe.applies).toEqual({ one: 1, two: 1 })
  })

  it('reports malformed entries and duplicate ids without stopping the others', async () => {
    const { report, loader } = await load(`
- just a string
- id: typo
  name: ./counter.mjs
  disable: true
- id: twice
  name: ./counter.mjs
  config: { label: twice }
- id: twice
  name: ./counter.mjs
  config: { label: again }
- name: ./counter.mjs
  config: { label: anonymous }
`)
    const errors = loader.entries.filter((entry) => entry.error).map((entry) => entry.error)
    expect(errors).toEqual([
      'entry #1: expected a mapping with "id" and "name", got "just a string"',
      'entry "typo": unknown field "disable" (expected id, name, config, disabled, group)',
      'entry "twice" (#4): id: "twice" is already used by entry #3',
    ])
    expect(report.loaded).toEqual(['twice', './counter.mjs'])
    expect(fixtures.probe.applies).toEqual({ twice: 1, anonymous: 1 })
  })

  it('reports an entry that waits for a service nothing provides', async () => {
    const { report, loader } = await load(`
- id: consumer
  name: ./consumer.mjs
`)
    expect(report.ok).toBe(false)
    expect(report.waiting).toEqual(['consumer'])
    expect(loader.get('consumer')?.waitingFor).toEqual(['fixtureStore'])
  })

  it('warns about an entry left waiting, unless an entry failed: then the waits are its echo and only debug lines', async () => {
    const alone = await load(`
- id: consumer
  name: ./consumer.mjs
`)
    expect(alone.logs).toContain('[warn] loader entry "consumer" waits for services: fixtureStore')
    const behind = await load(`
- id: boom
  name: ./throws.mjs
- id: consumer
  name: ./consumer.mjs
`)
    expect(behind.report.failed).toEqual(['boom'])
    expect(behind.report.waiting).toEqual(['consumer'])
    expect(behind.logs.filter((line) => line.includes('waits for services'))).toEqual(['[debug] loader entry "consumer" waits for services: fixtureStore'])
  })

  it('starts a consumer listed before its provider once the provider is loaded', async () => {
    const { report } = await load(`
- id: consumer
  name: ./consumer.mjs
- id: provider
  name: ./provider.mjs
`)
    expect(report.ok).toBe(true)
    expect(report.loaded).toEqual(['consumer', 'provider'])
    expect(fixtures.probe.log).toEqual(['apply provider', 'apply consumer'])
  })

  it('refuses a file that is not YAML or not a list, naming the position', async () => {
    const { file } = await writeYml(fixtures.dir, '- id: a\n  name: [unclosed\n')
    const { root } = captureContext()
    await expect(new Loader(root, { file }).load()).rejects.toThrow(/cordis\.yml: .* at line 3, column 1$/)
    await writeYml(fixtures.dir, 'id: a\nname: ./counter.mjs\n')
    await expect(new Loader(root, { file }).load()).rejects.toThrow('expected a list of entries at the top level, got a mapping')
  })

  it('refuses an empty file and an alias bomb with a message', async () => {
    const { root } = captureContext()
    const { file } = await writeYml(fixtures.dir, '# nothing here\n')
    await expect(new Loader(root, { file }).load()).rejects.toThrow(/the file is empty: it lists no entries$/)
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]', ...Array.from({ length: 8 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10).fill(`*${String.fromCharCode(97 + i)}`).join(', ')}]`), '- id: a']
    await writeYml(fixtures.dir, `- id: x\n  name: ./counter.mjs\n  config:\n    ${bomb.slice(0, -1).join('\n    ')}\n`)
    await expect(new Loader(root, { file }).load()).rejects.toThrow(/the YAML cannot be expanded: .*alias/i)
  })
})

describe('a huge cordis.yml', () => {
  it('formats the report of 200,000 entries without recursion', () => {
    const entries = Array.from({ length: 200_000 }, (_, i) => ({ id: `off${i}`, kind: 'plugin' as const, name: '@fixture/counter', groups: [], status: 'disabled' as const }))
    const text = formatReport(buildReport('/x/cordis.yml', entries, { added: [], removed: [], reloaded: [], unchanged: [] }))
    expect(text).toHaveLength(200_002)
    expect(text[1]).toBe(`  disabled  off0${' '.repeat(7)}@fixture/counter`)
    expect(text.at(-1)).toBe('200000 entries: 0 loaded, 200000 disabled')
  })

  it('loads 20,000 disabled entries and a few real ones, in time linear in the file', { timeout: 60_000 }, async () => {
    const lines = ['- id: first', "  name: '@fixture/counter'", '  config: { label: first }']
    for (let i = 0; i < 20_000; i++) lines.push(`- id: off${i}`, "  name: '@fixture/counter'", '  disabled: true')
    lines.push('- id: group', '  group: true', '  config:', '    - id: last', '      name: ./counter.mjs', '      config: { label: last }')
    const started = performance.now()
    const { report } = await load(lines.join('\n'))
    const text = formatReport(report)
    const seconds = (performance.now() - started) / 1000
    expect(report.error).toBeUndefined()
    expect(report.ok).toBe(true)
    expect(report.loaded).toEqual(['first', 'last'])
    expect(report.disabled).toHaveLength(20_000)
    expect(text.at(-1)).toBe('20002 entries: 2 loaded, 20000 disabled')
    expect(globalThis.__gk.applies).toEqual({ first: 1, last: 1 })
    // Under a second on an idle machine, most of it the YAML parser; quadratic work would take minutes.
    expect(seconds).toBeLessThan(30)
  })

  it('groups nested 2,000 deep are refused with a message naming the position, not a crash', () => {
    // JSON is YAML; built bottom-up, so the test itself recurses nowhere.
    let yaml = '{"id":"leaf","name":"@fixture/counter"}'
    for (let depth = 1_999; depth >= 0; depth--) yaml = `{"id":"g${depth}","group":true,"config":[${yaml}]}`
    expect(() => parseComposition(`[${yaml}]`, {})).toThrow(/^Maximum call stack size exceeded at line 1, column \d+$/)
  })
})

describe('plugins the program carries, and partial loads', () => {
  it('takes a name from builtins before anything installed next to the file; other names resolve as before', async () => {
    const { file } = await writeYml(fixtures.dir, `
- id: carried
  name: '@fixture/counter'
  config: { label: carried }
- id: local
  name: ./counter.mjs
  config: { label: local }
`)
    const applied: string[] = []
    const carried = { name: 'carried-copy', apply: (_ctx: unknown, config: { label: string }) => void applied.push(config.label) }
    const { root } = captureContext()
    const loader = new Loader(root, { file, env: {}, builtins: { '@fixture/counter': async () => carried } })
    fixtures.loaders.push(loader)
    const report = await loader.load()
    expect(report.ok).toBe(true)
    expect(applied).toEqual(['carried'])
    // The installed @fixture/counter was not imported for the carried entry; the local file was.
    expect(fixtures.probe.applies).toEqual({ local: 1 })
  })

  it('a builtin that fails to import fails its entry with the name, like a missing package', async () => {
    const { file } = await writeYml(fixtures.dir, `
- id: broken
  name: '@fixture/counter'
`)
    const { root } = captureContext()
    const loader = new Loader(root, { file, env: {}, builtins: { '@fixture/counter': async () => { throw new Error('chunk missing') } } })
    fixtures.loaders.push(loader)
    const report = await loader.load()
    expect(report.ok).toBe(false)
    expect(report.entries[0].error).toBe('entry "broken": name: cannot import "@fixture/counter": chunk missing')
  })

  it('load({ until }) stops after the first entry that makes it true and starts none below', async () => {
    const { file } = await writeYml(fixtures.dir, `
- id: first
  name: ./counter.mjs
  config: { label: first }
- id: second
  name: ./counter.mjs
  config: { label: second }
- id: third
  name: ./counter.mjs
  config: { label: third }
`)
    const { root } = captureContext()
    const loader = new Loader(root, { file, env: {} })
    fixtures.loaders.push(loader)
    const report = await loader.load({ until: () => (fixtures.probe.applies.second ?? 0) > 0 })
    expect(report.loaded).toEqual(['first', 'second'])
    expect(fixtures.probe.applies).toEqual({ first: 1, second: 1 })
    expect(loader.entries.map((entry) => entry.id)).toEqual(['first', 'second'])
  })
})
