import type { Context } from 'cordis'
import Schema from 'schemastery'
import { Loader } from './loader.ts'

export { type App, exitAfterFlush, startApp, type StartAppOptions } from './app.ts'
export { type CommandContext, type CommandDefinition, defineCommand, type GlobalOptions } from './command.ts'
export { type CompositionError, type EntrySpec, parseComposition } from './composition.ts'
export { type ConsoleExporterOptions, createConsoleExporter, LogLevel, type LogLevelName, parseLogLevel } from './console-exporter.ts'
export { type Env, interpolate } from './env.ts'
export { describeError, HostError } from './errors.ts'
export { ExitCode } from './exit-codes.ts'
export { Loader, type LoaderEvents, type LoaderOptions } from './loader.ts'
export { type CliIO, runCli } from './program.ts'
export { redact } from './redact.ts'
export { type EntryInfo, type EntryStatus, formatReport, type LoadReport, type ReloadChanges, summarize } from './report.ts'
export { type InterruptHandler, type InterruptInfo, SignalController } from './signals.ts'

/**
 * The host as a plugin: loads another cordis.yml into this plugin's context, as a nested composition with
 * its own ordered shutdown. `startApp` is the usual way in; this is for embedding one composition in another.
 */
export const name = 'host'
export const inject: string[] = []

export const Config = Schema.object({
  file: Schema.string().required().description('Path of the cordis.yml to load (relative to the process cwd).'),
  watch: Schema.boolean().default(false).description('Reload when the file changes.'),
})

export const apply = async (ctx: Context, config: Schemastery.TypeT<typeof Config>) => {
  const loader = new Loader(ctx, { file: config.file })
  await loader.load()
  if (config.watch) loader.watch()
  ctx.effect(() => () => loader.dispose(), 'host:composition')
}
