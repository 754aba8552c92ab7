import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { type EntryInfo, Loader, type LoadReport } from '../src/index.ts'
import { captureContext, writeYml, useFixtures } from '@goalkeeper/test-kit'

const fixtures = useFixtures()

const counterEntry = (id: string, extra = '') => `- id: ${id}\n  name: ./counter.mjs\n  config: { label: ${id}${extra} }\n`

async function start(text: string) {
  const { file } = await writeYml(fixtures.dir, text)
  const { root, logs } = captureContext()
  const loader = new Loader(root, { file, env: {}, debounceMs: 20 })
  fixtures.loaders.push(loader)
  const report = await loader.load()
  return { loader, report, logs, file }
}

/** Rewrites the file (through writeYml, so the after-test byte check knows the new content). */
async function edit(file: string, text: string) {
  return (await writeYml(path.dirname(file), text, path.basename(file))).bytes
}

describe('hot reload', () => {
  it('restarts only the changed entry; an unchanged one keeps its fiber and in-memory state', async () => {
    const { loader, file } = await start(counterEntry('keep') + counterEntry('change') + counterEntry('drop'))
    const keepFiber = loader.get('keep')?.fiber
    const changeFiber = loader.get('change')?.fiber
    fixtures.probe.state.keep.hits = 41

    const unloaded: string[] = []
    loader.on('entry-unloaded', (entry) => unloaded.push(entry.id))
    const bytes = await edit(file, counterEntry('keep') + counterEntry('change', ', maxSteps: 5') + counterEntry('new'))
    const report = await loader.reload()

    expect(report.changes).toEqual({ added: ['new'], removed: ['drop'], reloaded: ['change'], unchanged: ['keep'] })
    expect(fixtures.probe.applies).toEqual({ keep: 1, change: 2, drop: 1, new: 1 })
    expect(fixtures.probe.state.keep.hits).toBe(41)
    expect(loader.get('keep')?.fiber).toBe(keepFiber)
    expect(loader.get('change')?.fiber).not.toBe(changeFiber)
    expect(fixtures.probe.configs.change).toEqual({ label: 'change', maxSteps: 5 })
    expect(unloaded).toEqual(['drop', 'change'])
    expect(loader.entries.map((entry) => entry.id)).toEqual(['keep', 'change', 'new'])
    expect(await readFile(file)).toEqual(bytes)
  })

  it('disabling and re-enabling an entry unloads and restarts it', async () => {
    const { loader, file } = await start(counterEntry('a') + counterEntry('b'))
    await edit(file, counterEntry('a') + counterEntry('b') + '  disabled: true\n')
    expect((await loader.reload()).disabled).toEqual(['b'])
    expect(fixtures.probe.log).toContain('dispose-end b')
    await edit(file, counterEntry('a') + counterEntry('b'))
    expect((await loader.reload()).loaded).toEqual(['a', 'b'])
    expect(fixtures.probe.applies).toEqual({ a: 1, b: 2 })
  })

  it('removing an entry awaits its async teardown before the reload resolves', async () => {
    const { loader, file } = await start(counterEntry('stay') + '- id: slow\n  name: ./slow.mjs\n')
    let release!: () => void
    fixtures.probe.release = new Promise<void>((resolve) => (release = resolve))
    const started = new Promise<void>((resolve) => (fixtures.probe.teardownStarted = resolve))

    await edit(file, counterEntry('stay'))
    const reloading = loader.reload().then((report) => {
      fixtures.probe.log.push('reload resolved')
      return report
    })
    await started
    fixtures.probe.log.push('released')
    release()
    const report = await reloading

    expect(report.changes.removed).toEqual(['slow'])
    expect(fixtures.probe.log.slice(-4)).toEqual(['teardown-start slow', 'released', 'teardown-end slow', 'reload resolved'])
    expect(report.loaded).toEqual(['stay'])
  })

  it('a file that no longer parses keeps the running composition and reports the error', async () => {
    const { loader, file, logs } = await start(counterEntry('a'))
    const fiber = loader.get('a')?.fiber
    const bytes = await edit(file, '- id: a\n  name: [oops\n')
    const report = await loader.reload()

    expect(report.ok).toBe(false)
    expect(report.error).toMatch(/cordis\.yml: .*line/)
    expect(logs.some((line) => line.startsWith('[error] loader') && line.includes('keeping the running composition'))).toBe(true)
    expect(loader.get('a')?.fiber).toBe(fiber)
    expect(loader.get('a')?.status).toBe('loaded')
    expect(fixtures.probe.applies).toEqual({ a: 1 })
    expect(await readFile(file)).toEqual(bytes)
  })

  it('retries a failed entry on reload', async () => {
    const { loader, file } = await start(counterEntry('a', ', maxSteps: x'))
    expect(loader.get('a')?.status).toBe('failed')
    await edit(file, counterEntry('a', ', maxSteps: 2'))
    const report = await loader.reload()
    expect(report.changes.reloaded).toEqual(['a'])
    expect(report.loaded).toEqual(['a'])
  })

  it('with watch(), an edit of the file triggers a reload', async () => {
    const { loader, file } = await start(counterEntry('a'))
    const reloaded = new Promise<LoadReport>((resolve) => loader.on('reload', resolve))
    loader.watch()
    const bytes = await edit(file, counterEntry('a') + counterEntry('b'))
    const report = await reloaded

    expect(report.changes.added).toEqual(['b'])
    expect(fixtures.probe.applies).toEqual({ a: 1, b: 1 })
    await loader.dispose()
    expect(loader.watching).toBe(false)
    expect(await readFile(file)).toEqual(bytes)
  })
})

describe('shutdown', () => {
  it('disposes entries in reverse file order, each teardown finished before the next starts', async () => {
    const text = counterEntry('first') + counterEntry('second') + counterEntry('third')
    const { loader, file } = await start(text)
    const unloaded: EntryInfo[] = []
    loader.on('entry-unloaded', (entry) => unloaded.push(entry))
    await loader.dispose()

    expect(fixtures.probe.log.filter((line) => line.startsWith('dispose'))).toEqual([
      'dispose-start third', 'dispose-end third',
      'dispose-start second', 'dispose-end second',
      'dispose-start first', 'dispose-end first',
    ])
    expect(unloaded.map((entry) => entry.id)).toEqual(['third', 'second', 'first'])
    expect(loader.entries).toEqual([])
    await expect(loader.reload()).rejects.toThrow('disposed')
    expect(await readFile(file, 'utf8')).toBe(text)
  })

  it('a consumer goes before the service it injects', async () => {
    const { loader } = await start('- id: provider\n  name: ./provider.mjs\n- id: consumer\n  name: ./consumer.mjs\n')
    await loader.dispose()
    expect(fixtures.probe.log).toEqual(['apply provider', 'apply consumer', 'dispose consumer'])
  })
})
