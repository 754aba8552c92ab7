import type { ModelService } from '@goalkeeper/model'
import type { App } from '../../app.ts'
import type { GlobalOptions } from '../../command.ts'
import { HostError } from '../../errors.ts'
import { describeModel } from './model-note.ts'

/** Which provider (and model id) an agent of this run uses, and the line that says so and why. */
export interface ModelChoice {
  model: string
  modelId?: string
  line: string
}

/**
 * `--model PROVIDER[/MODEL]` when given (the provider must be registered: a provider that is off says why),
 * else the agent loop's default. Undefined when no provider is registered at all (the agent loop says so).
 */
export function chooseModel(app: App, globals: Pick<GlobalOptions, 'model'>): ModelChoice | undefined {
  const models = app.ctx.get('models') as ModelService | undefined
  if (globals.model === undefined) {
    const model = app.ctx.get('agents')?.defaultModel()
    return model ? { model, line: describeModel(models, model) } : undefined
  }
  const [model, ...rest] = globals.model.split('/')
  const modelId = rest.join('/') || undefined
  if (!model) throw new HostError(`--model ${JSON.stringify(globals.model)}: the provider name is empty`, { hint: 'pass --model PROVIDER or --model PROVIDER/MODEL, e.g. --model deepseek/deepseek-reasoner' })
  if (!models?.get(model)) {
    const off = models?.standbys().find((standby) => standby.name === model)
    const registered = models?.list() ?? []
    throw new HostError(`--model ${model}: ${off ? `the provider is off (${off.reason})` : 'no such provider is loaded'}`, {
      hint: off?.enableWith.length ? `export ${off.enableWith[0]}, or pick one of: ${registered.join(', ') || 'none'}` : `registered providers: ${registered.join(', ') || 'none'}`,
    })
  }
  const named = modelId ? `${model}/${modelId}` : model
  return { model, ...(modelId ? { modelId } : {}), line: `${describeModel(models, model).replace(/^model \S+/, `model ${named}`)}; chosen with --model` }
}
