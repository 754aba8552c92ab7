import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { Context, Logger } from 'cordis'
import { afterEach, beforeEach, expect } from 'vitest'

/**
 * Fixture plugins, written as real .mjs files next to a temp cordis.yml. They report to the test through
 * `globalThis.__gk` (the test and the loaded plugins share one process).
 */
export interface Probe {
  log: string[]
  applies: Record<string, number>
  configs: Record<string, unknown>
  /** In-memory state of the live `counter` instances, by label. */
  state: Record<string, { hits: number }>
  /** `slow` calls this when its teardown starts, then waits for `release`. */
  teardownStarted?: () => void
  release?: Promise<void>
}

declare global {
  // eslint-disable-next-line no-var
  var __gk: Probe
}

export function resetProbe(): Probe {
  globalThis.__gk = { log: [], applies: {}, configs: {}, state: {} }
  return globalThis.__gk
}

const counter = `
import Schema from 'schemastery'
export const name = 'counter'
export const Config = Schema.object({
  label: Schema.string().default('counter'),
  maxSteps: Schema.number().default(1),
})
export const apply = (ctx, config) => {
  const probe = globalThis.__gk
  probe.applies[config.label] = (probe.applies[config.label] ?? 0) + 1
  probe.configs[config.label] = config
  probe.state[config.label] = { hits: 0 }
  probe.log.push('apply ' + config.label)
  return async () => {
    probe.log.push('dispose-start ' + config.label)
    // A macrotask, so that overlapping teardowns would interleave in the log.
    await new Promise((resolve) => setImmediate(resolve))
    probe.log.push('dispose-end ' + config.label)
  }
}
`

const raw = `
export const name = 'raw'
export const apply = (ctx, config) => {
  globalThis.__gk.configs[config?.label ?? 'raw'] = config
}
`

const throws = `
export const name = 'throws'
export const apply = () => {
  throw new Error('boom in apply')
}
`

const slow = `
export const name = 'slow'
export const apply = (ctx) => {
  const probe = globalThis.__gk
  probe.log.push('apply slow')
  return async () => {
    probe.log.push('teardown-start slow')
    probe.teardownStarted?.()
    await probe.release
    probe.log.push('teardown-end slow')
  }
}
`

const provider = `
export const name = 'provider'
export const apply = (ctx) => {
  ctx.provide('fixtureStore', { items: [] })
  globalThis.__gk.log.push('apply provider')
}
`

const consumer = `
export const name = 'consumer'
export const inject = ['fixtureStore']
export const apply = (ctx) => {
  ctx.fixtureStore.items.push('consumer')
  globalThis.__gk.log.push('apply consumer')
  return () => globalThis.__gk.log.push('dispose consumer')
}
`

const throwingDisposer = `
export const name = 'bad-disposer'
export const apply = () => () => {
  throw new Error('disposer exploded')
}
`

// For child-process tests: reports only through the Cordis logger, so it shows on the CLI's stderr.
const noisy = `
export const name = 'noisy'
export const apply = (ctx, config) => {
  const label = config?.label ?? 'noisy'
  ctx.logger.info('start %s', label)
  return async () => {
    ctx.logger.info('stop-begin %s', label)
    await new Promise((resolve) => setImmediate(resolve))
    ctx.logger.info('stop-end %s', label)
  }
}
`

const hang = `
export const name = 'hang'
export const apply = (ctx) => async () => {
  ctx.logger.warn('teardown that never ends')
  await new Promise(() => {})
}
`

export const fixtureSources = { counter, raw, throws, slow, provider, consumer, throwingDisposer, noisy, hang }

/** A temp dir with every fixture as `./NAME.mjs`, `counter` also as the package `@fixture/counter`. */
export async function makeFixtureDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gk-'))
  const schemastery = path.dirname(createRequire(import.meta.url).resolve('schemastery/package.json'))
  await mkdir(path.join(dir, 'node_modules', '@fixture', 'counter'), { recursive: true })
  await symlink(schemastery, path.join(dir, 'node_modules', 'schemastery'), 'dir')
  const pkg = path.join(dir, 'node_modules', '@fixture', 'counter')
  await writeFile(path.join(pkg, 'package.json'), JSON.stringify({ name: '@fixture/counter', type: 'module', exports: './index.mjs' }))
  await writeFile(path.join(pkg, 'index.mjs'), counter)
  for (const [name, source] of Object.entries(fixtureSources)) await writeFile(path.join(dir, `${name}.mjs`), source)
  return dir
}

export async function removeDir(dir: string) {
  await rm(dir, { recursive: true, force: true })
}

/** Every yml a test wrote, with its bytes: `useFixtures` checks after each test that nothing rewrote it. */
const written = new Map<string, Buffer>()

/** Writes cordis.yml in `dir` and returns its path and bytes. */
export async function writeYml(dir: string, text: string, name = 'cordis.yml') {
  const file = path.join(dir, name)
  await writeFile(file, text)
  const bytes = await readFile(file)
  written.set(file, bytes)
  return { file, bytes }
}

/** A fresh root context whose log lines are captured as `[type] name text`. */
export function captureContext() {
  const root = new Context()
  const logs: string[] = []
  const exporter = {
    levels: { default: 3 },
    export: (message: any) => logs.push(`[${message.type}] ${message.name} ${Logger.format(exporter, message)}`),
  }
  root.logger.exporter(exporter)
  return { root, logs }
}

/**
 * Per-test fixture dir and probe. After the test: loaders pushed to `loaders` are disposed, every yml
 * written with `writeYml` must still hold exactly the bytes written (the loader never writes), and the
 * dir is removed.
 */
export function useFixtures() {
  // Only what teardown calls: naming the loader's type here would make test-kit depend on the loader, whose tests use test-kit.
  const fixtures = { dir: '', probe: undefined as unknown as Probe, loaders: [] as { dispose(): Promise<unknown> }[] }
  beforeEach(async () => {
    fixtures.dir = await makeFixtureDir()
    fixtures.probe = resetProbe()
  })
  afterEach(async () => {
    for (const loader of fixtures.loaders.splice(0)) await loader.dispose()
    const files = [...written].filter(([file]) => file.startsWith(fixtures.dir))
    written.clear()
    for (const [file, bytes] of files) expect(await readFile(file), `${file} was rewritten`).toEqual(bytes)
    await removeDir(fixtures.dir)
  })
  return fixtures
}
