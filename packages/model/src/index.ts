import type { Context } from 'cordis'
import Schema from 'schemastery'
import type { ModelService } from './types.ts'
import { ModelRegistry } from './registry.ts'
import { createScriptedProvider } from './scripted.ts'
import { checkSteps, loadScriptModule } from './script.ts'

export * from './types.ts'
export { createScriptedProvider } from './scripted.ts'
export { OUTPUT_SCHEMA_NAME, outputSchemaInstruction } from './output-schema.ts'

declare module 'cordis' {
  interface Context {
    /** The provider registry (section 4). */
    models: ModelService
  }
  interface Events {
    /** A provider registered as `provider` waits `retry.waitMs` before retrying (isolated; providers emit it). */
    'model/retry'(provider: string, retry: import('./types.ts').ModelRetryInfo): void
    /** Trouble with a response stream of `provider` that a person should see: cut off after output, or silent (isolated; providers emit it). */
    'model/stream'(provider: string, notice: import('./types.ts').ModelStreamNotice): void
  }
}

export const name = 'model'
export const inject: string[] = []

export const Config = Schema.object({
  scripted: Schema.object({
    script: Schema.array(Schema.any()).default([]).description('Script steps replayed one per model request (see README).'),
    contextWindow: Schema.natural().min(1).description('Context window in tokens the provider reports (none by default, so the agent loop compacts only on a CONTEXT_OVERFLOW).'),
    module: Schema.string().description('Path (relative to the process cwd) of an ESM module whose default export is a step array or a function returning one; its steps follow `script`.'),
    // Cast because schemastery types every key as present; `module` is optional at runtime.
  }).default({ script: [] } as unknown as { script: any[]; module: string; contextWindow: number }).description('The always-registered `scripted` provider.'),
})

export const apply = async (ctx: Context, config: Schemastery.TypeT<typeof Config>) => {
  // Load and validate the script before providing the service, so a bad script fails the plugin cleanly.
  const steps = [...checkSteps(config.scripted?.script ?? [], 'scripted.script')]
  if (config.scripted?.module) steps.push(...(await loadScriptModule(config.scripted.module)))
  const registry = new ModelRegistry(ctx)
  registry.register('scripted', createScriptedProvider(steps, { contextWindow: config.scripted?.contextWindow }))
}
