import type { Context } from 'cordis'
import Schema from 'schemastery'
import { Loader } from './loader.ts'

export { type CompositionError, type EntrySpec, parseComposition } from './composition.ts'
export { type Env, interpolate } from './env.ts'
export { LoaderError } from './errors.ts'
export { compositionFileOf } from './source.ts'
export { Loader, type LoaderEvents, type LoaderOptions } from './loader.ts'
export type { BuiltinPlugins } from './resolve.ts'
export {
  type EntryInfo,
  type EntryStatus,
  formatReport,
  type LoadReport,
  type ReloadChanges,
  reportJson,
  summarize,
  summarizeChanges,
} from './report.ts'

/**
 * The loader as a plugin: loads another cordis.yml into this plugin's context, as a nested composition
 * with its own ordered shutdown. For embedding one composition in another.
 */
export const name = 'loader'
export const inject: string[] = []

export const Config = Schema.object({
  file: Schema.string().required().description('Path of the cordis.yml to load (relative to the process cwd).'),
  watch: Schema.boolean().default(false).description('Reload when the file changes.'),
})

export const apply = async (ctx: Context, config: Schemastery.TypeT<typeof Config>) => {
  const loader = new Loader(ctx, { file: config.file })
  await loader.load()
  if (config.watch) loader.watch()
  ctx.effect(() => () => loader.dispose(), 'loader:composition')
}
