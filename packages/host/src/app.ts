import path from 'node:path'
import { Context, type Message } from 'cordis'
import { createConsoleExporter, DEFAULT_LOG_LEVEL, LogLevel, type LogLevelName, parseLogLevel } from './console-exporter.ts'
import { describeError } from '@goalkeeper/kit'
import { type BuiltinPlugins, type Env, Loader, LoaderError, type LoadReport } from '@goalkeeper/loader'
import { builtinPlugins } from './builtins.ts'
import { HostError } from './errors.ts'
import { type InterruptHandler, SignalController } from './signals.ts'

export interface StartAppOptions {
  /** Path of the cordis.yml, relative to `cwd` (default `cordis.yml`). */
  config?: string
  /** Base directory for `config` (default: process.cwd()). The process's own cwd is not changed. */
  cwd?: string
  /** Console log level (default `warn`). */
  logLevel?: LogLevelName | number
  /** Reload the composition when the cordis.yml changes. */
  watch?: boolean
  /** Quiet period before a watched reload (default: GOALKEEPER_WATCH_DEBOUNCE_MS, else the loader's 20 ms). */
  watchDebounceMs?: number
  /** Variables for `${VAR}` in cordis.yml and for masking secrets in logs (default: process.env). */
  env?: Env
  /** Where log lines go (default: process.stderr). */
  stderr?: { write(text: string): unknown; isTTY?: boolean }
  /**
   * Install SIGINT/SIGTERM handling: an ordered shutdown, then `exit(code)` (default: process.exit once
   * stdout and stderr are flushed). Off by default so that tests and embedders keep control.
   */
  signals?: boolean | { exit: (code: number) => void }
  /**
   * The caller reports the entries that fail the first load itself (as the agent commands do, in one
   * line): the error lines of the loader and of Cordis that only repeat `report` are then left out.
   * Other errors, and everything at debug level, are still printed.
   */
  reportsFailedEntries?: boolean
  /** Load entries in file order only until this holds (see Loader.load); every entry when absent. */
  until?: (ctx: Context) => boolean
  /** Plugins resolved by entry name before anything installed (default: the ones goalkeeper carries). */
  builtins?: BuiltinPlugins
}

export interface App {
  /** The root context: it holds the console log exporter, which outlives the app fiber. */
  root: Context
  /** The app's own context (a child fiber of the root); the loader's entries live under it. */
  ctx: Context
  loader: Loader
  /** Result of the first load. */
  report: LoadReport
  signals: SignalController | undefined
  /** Registers a SIGINT handler (see SignalController.onInterrupt); a no-op without `signals`. */
  onInterrupt(handler: InterruptHandler): () => void
  /** Ordered shutdown: entries in reverse cordis.yml order, each awaited, then the app fiber. Idempotent. */
  shutdown(): Promise<void>
  /** Resolves when the shutdown is complete, whoever started it. */
  closed: Promise<void>
}

type Stderr = NonNullable<StartAppOptions['stderr']>

/** Loads a cordis.yml into a fresh Cordis app with a console log exporter: what every CLI command starts from. */
export async function startApp(options: StartAppOptions = {}): Promise<App> {
  const file = path.resolve(options.cwd ?? process.cwd(), options.config ?? 'cordis.yml')
  const stderr = options.stderr ?? process.stderr
  const { root, release } = rootWithLog(options, stderr)
  // The app lives in a child fiber: disposing the root would also remove the exporter before the
  // shutdown's own log lines are out.
  let ctx!: Context
  const fiber = await root.plugin({ name: 'app', apply: (inner: Context) => void (ctx = inner) })
  const loader = new Loader(ctx, { file, env: options.env, builtins: options.builtins ?? builtinPlugins, debounceMs: options.watchDebounceMs ?? debounceFromEnv() })
  let report: LoadReport
  try {
    report = await loader.load({ until: options.until && (() => options.until!(ctx)) })
  } catch (error) {
    release(undefined)
    await fiber.dispose()
    // A cordis.yml that can not be used is bad configuration: one line with its hint, exit 64.
    throw error instanceof LoaderError ? new HostError(error.message, { hint: error.hint, cause: error }) : error
  }
  release(report)
  if (options.watch) loader.watch()
  const { shutdown, closed, uninstall } = orderedShutdown(loader, fiber)
  const signals = options.signals ? installSignals(options.signals, shutdown, stderr) : undefined
  uninstall.signals = signals
  const onInterrupt = (handler: InterruptHandler) => signals?.onInterrupt(handler) ?? (() => {})
  return { root, ctx, loader, report, signals, onInterrupt, shutdown, closed }
}

/**
 * The root context with its console log exporter. With `reportsFailedEntries`, error lines are held until
 * `release` is given the load's report, and those that only repeat a failed entry of it are dropped.
 */
function rootWithLog(options: StartAppOptions, stderr: Stderr) {
  const level = parseLogLevel(options.logLevel ?? DEFAULT_LOG_LEVEL)
  const root = new Context()
  const console = createConsoleExporter({ level, stream: stderr, env: options.env })
  let held: Message[] | undefined = options.reportsFailedEntries && level < LogLevel.debug ? [] : undefined
  root.logger.exporter({
    ...console,
    export: (message) => (held && message.type === 'error' ? held.push(message) : console.export(message)),
  })
  const release = (report: LoadReport | undefined) => {
    const messages = held ?? []
    held = undefined
    for (const message of messages) if (!repeatsReport(message, report)) console.export(message)
  }
  return { root, release }
}

/** The app's shutdown, run once whoever asks; `uninstall.signals` is let go of when it is done. */
function orderedShutdown(loader: Loader, fiber: { dispose(): Promise<unknown> }) {
  let closing: Promise<void> | undefined
  let markClosed!: () => void
  const closed = new Promise<void>((resolve) => (markClosed = resolve))
  const uninstall: { signals?: SignalController } = {}
  const shutdown = () =>
    (closing ??= (async () => {
      // A teardown may wait on something that holds no handle; without this timer Node would then exit
      // mid-shutdown (code 13) instead of waiting for the teardown or a forcing second signal.
      const keepAlive = setInterval(() => {}, 60_000)
      try {
        await loader.dispose()
        await fiber.dispose()
      } finally {
        clearInterval(keepAlive)
        uninstall.signals?.uninstall()
        markClosed()
      }
    })())
  return { shutdown, closed, uninstall }
}

function installSignals(option: NonNullable<StartAppOptions['signals']>, shutdown: () => Promise<void>, stderr: Stderr): SignalController {
  const exit = typeof option === 'object' ? option.exit : exitAfterFlush
  // Under npm (npm start, npx) a wrapper process sits between the shell and goalkeeper and does not always
  // pass signals on: notice when it is gone. Not otherwise: `nohup goalkeeper goal ... &` outlives its shell on purpose.
  const parentCheckMs = option === true && process.env.npm_command ? 1000 : 0
  return new SignalController({ shutdown, exit, parentCheckMs, parentGenerations: 2, note: (line) => stderr.write(`goalkeeper: ${line}\n`) }).install()
}

/** Whether a log message only says what a failed entry of the report says. */
function repeatsReport(message: Message, report: LoadReport | undefined): boolean {
  const errors = report?.entries.flatMap((entry) => (entry.status === 'failed' && entry.error ? [entry.error] : [])) ?? []
  return message.args.some((arg) =>
    arg instanceof Error
      // Cordis's own line for a throwing apply; the loader reports it as `apply failed: <message>`.
      ? errors.some((error) => error.endsWith(`apply failed: ${describeError(arg)}`))
      : message.name === 'loader' && errors.includes(String(arg)))
}

/** process.exit can cut off output still buffered for a pipe; wait until both streams have taken theirs. */
export async function exitAfterFlush(code: number): Promise<never> {
  await Promise.all([process.stdout, process.stderr].map((stream) => new Promise((resolve) => stream.write('', resolve))))
  process.exit(code)
}

function debounceFromEnv(): number | undefined {
  const text = process.env.GOALKEEPER_WATCH_DEBOUNCE_MS
  if (text === undefined || text === '') return undefined
  if (!/^\d+$/.test(text)) throw new HostError(`GOALKEEPER_WATCH_DEBOUNCE_MS=${text}: expected whole milliseconds`, { hint: 'unset it for the default (20)' })
  return Number(text)
}
