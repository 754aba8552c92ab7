import { EventEmitter } from 'node:events'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import type { Context, Fiber, Logger } from 'cordis'
import { CompositionError, type EntrySpec, parseComposition } from './composition.ts'
import { checkConfig } from './config-issues.ts'
import type { Env } from './env.ts'
import { describeError } from '@goalkeeper/kit'
import { LoaderError } from './errors.ts'
import { buildReport, type EntryInfo, type LoadReport, type ReloadChanges, summarize, summarizeChanges } from './report.ts'
import { type BuiltinPlugins, importPlugin } from './resolve.ts'
import { watchFile } from './watch.ts'
import './source.ts'

// Fiber states (cordis declares them as an ambient const enum, unusable under isolatedModules).
const ACTIVE = 2
const FAILED = 3
const DISPOSED = 4

export interface LoaderOptions {
  /** Path of the cordis.yml (relative paths resolve from process.cwd()). */
  file: string
  /** Variables for `${VAR}` interpolation (default: process.env). */
  env?: Env
  /**
   * Quiet period after the last file event before a watched reload (default 20 ms): long enough for the
   * writes of one save to settle, short enough that a reload starts well within 50 ms of it.
   */
  debounceMs?: number
  /** Plugins the program carries, by entry name; they win over packages installed next to the file. */
  builtins?: BuiltinPlugins
}

export interface LoaderEvents {
  'entry-loaded': [entry: EntryInfo]
  'entry-failed': [entry: EntryInfo]
  'entry-unloaded': [entry: EntryInfo]
  /** After every `reload()`, including one that could not parse the file (`report.error`). */
  reload: [report: LoadReport]
}

interface Slot {
  spec: EntrySpec
  fiber?: Fiber
  /** Full report line of a failure; a failed slot never keeps a fiber. */
  error?: string
}

/**
 * Loads a cordis.yml into `ctx`: each enabled entry in its own fiber, in file order. It never writes the
 * file. Operations (load, reload, dispose) run one at a time in call order.
 */
export class Loader {
  readonly file: string
  readonly dir: string
  private slots = new Map<string, Slot>()
  private queue: Promise<unknown> = Promise.resolve()
  private emitter = new EventEmitter<LoaderEvents>()
  private logger: Logger
  private env: Env
  private debounceMs: number
  private builtins: BuiltinPlugins
  private stopWatching: (() => void) | undefined
  private disposed = false
  /** What each entry is started on: the loader's context, telling its plugins which file they came from. */
  private entryContext: Context

  constructor(readonly ctx: Context, options: LoaderOptions) {
    this.file = path.resolve(options.file)
    this.dir = path.dirname(this.file)
    this.env = options.env ?? process.env
    this.debounceMs = options.debounceMs ?? 20
    this.builtins = options.builtins ?? {}
    this.logger = ctx.logger('loader')
    this.entryContext = ctx.extend({ compositionFile: this.file })
  }

  /** Live state of every entry, groups included, in file order. */
  get entries(): EntryInfo[] {
    return [...this.slots.values()].map((slot) => this.info(slot))
  }

  get(id: string): EntryInfo | undefined {
    return this.entries.find((entry) => entry.id === id)
  }

  get watching(): boolean {
    return !!this.stopWatching
  }

  on<K extends keyof LoaderEvents>(event: K, listener: (...args: LoaderEvents[K]) => void): () => void {
    // Node's typed listener does not resolve for a generic K; this signature keeps callers typed.
    const emitter: EventEmitter = this.emitter
    emitter.on(event, listener)
    return () => emitter.off(event, listener)
  }

  /**
   * First load. Throws a LoaderError when the file can not be read or parsed; bad entries only fail themselves.
   * With `until`, loading stops after the first entry that makes it true and later entries are not started
   * (nor listed): for a command that needs only what the top of the file provides, such as the session
   * store for listing sessions.
   */
  load(options: { until?: () => boolean } = {}): Promise<LoadReport> {
    return this.serialize(async () => {
      this.assertOpen()
      return this.apply(await this.read(), options.until)
    })
  }

  /**
   * Re-reads the file and restarts only the entries whose name, config or disabled flag changed (matched by
   * id), removes deleted ones and starts new ones; failed entries are retried. A file that can not be
   * parsed leaves the running composition as it is and is reported in `report.error`.
   */
  reload(): Promise<LoadReport> {
    return this.serialize(async () => {
      this.assertOpen()
      let report: LoadReport
      try {
        report = await this.apply(await this.read())
        this.logger.info('reloaded %s: %s (%s)', this.file, summarizeChanges(report.changes), summarize(report))
      } catch (error) {
        if (!(error instanceof LoaderError)) throw error
        this.logger.error('%s; keeping the running composition', error.message)
        report = buildReport(this.file, this.entries, { added: [], removed: [], reloaded: [], unchanged: [] }, error.message)
      }
      this.emitter.emit('reload', report)
      return report
    })
  }

  /** Reloads on every change of the file (debounced) until the returned function or `dispose()` is called. */
  watch(): () => void {
    this.assertOpen()
    this.stopWatching ??= watchFile(this.file, this.debounceMs, {
      change: () => void this.reload().catch((error) => this.logger.error('reload failed: %s', describeError(error))),
      error: (error) => this.logger.warn('stopped watching %s: %s', this.file, describeError(error)),
    })
    return () => this.unwatch()
  }

  /** Unloads every entry in reverse file order, awaiting each one's full disposal. */
  dispose(): Promise<void> {
    this.unwatch()
    return this.serialize(async () => {
      if (this.disposed) return
      this.disposed = true
      for (const [key, slot] of [...this.slots].reverse()) {
        await this.unload(slot)
        this.slots.delete(key)
      }
    })
  }

  private unwatch() {
    this.stopWatching?.()
    this.stopWatching = undefined
  }

  private serialize<T>(task: () => Promise<T>): Promise<T> {
    const result = this.queue.then(task)
    this.queue = result.catch(() => {})
    return result
  }

  private assertOpen() {
    if (this.disposed) throw new LoaderError('the loader has been disposed')
  }

  private async read(): Promise<EntrySpec[]> {
    let text: string
    try {
      text = await readFile(this.file, 'utf8')
    } catch (error) {
      throw new LoaderError(`cannot read ${this.file}: ${describeError(error)}`, {
        hint: 'pass --config PATH, or run where cordis.yml is',
        cause: error,
      })
    }
    try {
      return parseComposition(text, this.env)
    } catch (error) {
      if (!(error instanceof CompositionError)) throw error
      throw new LoaderError(`${this.file}: ${error.message}`, { hint: 'fix the file; nothing was loaded from it', cause: error })
    }
  }

  private async apply(specs: EntrySpec[], until?: () => boolean): Promise<LoadReport> {
    const next = new Map(specs.map((spec) => [spec.key, spec]))
    const changes: ReloadChanges = { added: [], removed: [], reloaded: [], unchanged: [] }
    const stale = new Set<Slot>()
    for (const slot of this.slots.values()) {
      const spec = next.get(slot.spec.key)
      if (!spec) changes.removed.push(slot.spec.id)
      else if (this.changed(slot, spec)) changes.reloaded.push(spec.id)
      else {
        changes.unchanged.push(spec.id)
        continue
      }
      stale.add(slot)
    }
    // Reverse file order, so an entry goes before the entries listed above it whose services it uses.
    for (const slot of [...stale].reverse()) await this.unload(slot)

    const slots = new Map<string, Slot>()
    const started: Slot[] = []
    for (const spec of specs) {
      const old = this.slots.get(spec.key)
      if (old && !stale.has(old)) {
        old.spec = spec
        slots.set(spec.key, old)
        continue
      }
      if (!old) changes.added.push(spec.id)
      const slot = await this.start(spec)
      slots.set(spec.key, slot)
      started.push(slot)
      if (until?.()) break
    }
    this.slots = slots
    await this.settle()
    // Entries waiting behind one that failed are its echo (a session store that cannot connect leaves
    // the agents, goals... waiting): the failure is what to read, so then the waits are only debug lines.
    const anyFailed = started.some((slot) => this.info(slot).status === 'failed')
    for (const slot of started) {
      const info = this.info(slot)
      if (info.status === 'waiting') this.logger[anyFailed ? 'debug' : 'warn']('%s waits for services: %s', slot.spec.label, info.waitingFor?.join(', '))
      if (info.status === 'loaded' && info.kind === 'plugin') this.emitter.emit('entry-loaded', info)
      if (info.status === 'failed') this.emitter.emit('entry-failed', info)
    }
    return buildReport(this.file, this.entries, changes)
  }

  private changed(slot: Slot, spec: EntrySpec): boolean {
    const old = slot.spec
    if (slot.error || spec.error || slot.fiber?.state === FAILED || slot.fiber?.state === DISPOSED) return true
    return old.kind !== spec.kind || old.name !== spec.name || old.disabled !== spec.disabled || !isDeepStrictEqual(old.config, spec.config)
  }

  private async start(spec: EntrySpec): Promise<Slot> {
    const slot: Slot = { spec }
    if (spec.error) return this.fail(slot, spec.error)
    if (spec.kind === 'group' || spec.disabled) return slot
    let plugin
    try {
      plugin = await importPlugin(spec.name!, this.dir, this.builtins)
    } catch (error) {
      return this.fail(slot, `name: ${describeError(error)}`)
    }
    const problem = checkConfig(plugin.Config, spec.config)
    if (problem) return this.fail(slot, problem)
    try {
      // ctx.plugin returns a thenable wrapper around the fiber; keep the fiber itself so that returning or
      // awaiting it later never waits on the plugin.
      slot.fiber = Object.getPrototypeOf(this.entryContext.plugin(plugin, spec.config)) as Fiber
      await slot.fiber.await()
    } catch (error) {
      await this.release(slot)
      return this.fail(slot, `apply failed: ${describeError(error)}`)
    }
    this.logger.debug('loaded %s (%s)', spec.label, spec.name)
    return slot
  }

  private fail(slot: Slot, problem: string): Slot {
    slot.error = `${slot.spec.label}: ${problem}`
    this.logger.error('%s', slot.error)
    return slot
  }

  /**
   * Activating one entry can start (or fail) entries that inject its services, asynchronously; wait until
   * every fiber is quiet so that the report tells the truth, and turn late failures into failed entries.
   */
  private async settle() {
    const fibers = () => [...this.slots.values()].flatMap((slot) => (slot.fiber ? [slot.fiber] : []))
    for (let round = 0; round < 100 && fibers().some((fiber) => fiber.inertia); round++) {
      await Promise.allSettled(fibers().map((fiber) => fiber.await()))
    }
    for (const slot of this.slots.values()) {
      if (slot.fiber?.state !== FAILED) continue
      const error = await slot.fiber.await().then(() => undefined, (reason: unknown) => reason)
      await this.release(slot)
      this.fail(slot, `apply failed: ${describeError(error)}`)
    }
  }

  private async release(slot: Slot) {
    const fiber = slot.fiber
    slot.fiber = undefined
    try {
      await fiber?.dispose()
    } catch (error) {
      this.logger.error('%s: disposal failed: %s', slot.spec.label, describeError(error))
    }
  }

  private async unload(slot: Slot) {
    if (!slot.fiber) return
    const info = this.info(slot)
    await this.release(slot)
    this.logger.debug('unloaded %s', slot.spec.label)
    this.emitter.emit('entry-unloaded', { ...info, fiber: undefined })
  }

  private info(slot: Slot): EntryInfo {
    const { spec, fiber } = slot
    const base = { id: spec.id, kind: spec.kind, name: spec.name, groups: spec.groups }
    if (slot.error) return { ...base, status: 'failed', error: slot.error }
    if (spec.disabled) return { ...base, status: 'disabled' }
    if (!fiber) return { ...base, status: 'loaded' }
    if (fiber.state === ACTIVE) return { ...base, status: 'loaded', fiber }
    if (fiber.state === FAILED || fiber.state === DISPOSED) {
      const reason = fiber.state === FAILED ? 'failed after a restart (see the log)' : 'was disposed outside the loader'
      return { ...base, status: 'failed', error: `${spec.label}: ${reason}`, fiber }
    }
    const waitingFor = Object.keys(fiber.inject).filter((name) => this.ctx.get(name) === undefined)
    return { ...base, status: 'waiting', waitingFor, fiber }
  }
}
