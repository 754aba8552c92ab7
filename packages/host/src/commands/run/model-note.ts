import type { ModelService } from '@goalkeeper/model'

/**
 * The progress line that says which model answers. A person must be able to tell from it whether the
 * work goes to a paid, remote model or stays offline, and why. Everything in it is what the providers
 * say about themselves through `ctx.models`.
 */
export function describeModel(models: ModelService | undefined, model: string): string {
  const description = models?.describe(model)
  if (description?.offline) {
    const variables = [...new Set((models?.standbys() ?? []).flatMap((standby) => standby.enableWith))]
    return variables.length
      ? `model ${model} (offline; export ${variables.join(' or ')} to switch to a real model, no edit of cordis.yml needed)`
      : `model ${model} (offline)`
  }
  const where = description?.host ? ` at ${description.host}` : ''
  const why = description?.keyEnv ? `, because ${description.keyEnv} is set; without it the offline scripted model answers` : ''
  return `model ${model} (a real model provider${where}${why})`
}
