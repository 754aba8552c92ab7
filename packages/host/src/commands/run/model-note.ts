import type { Agent } from '@goalkeeper/agent-loop'
import type { App } from '../../app.ts'
import { hasPlugin } from '../lookup/services.ts'

/** The key variables of the model-openai presets (the default composition loads both). */
const PRESET_KEYS: Record<string, string> = { deepseek: 'DEEPSEEK_API_KEY', openai: 'OPENAI_API_KEY' }

interface OpenAIEntryConfig {
  preset?: string
  name?: string
  baseUrl?: string
  apiKey?: string
  apiKeyEnv?: string
}

/**
 * The progress line that says which model answers. A person must be able to tell from it whether the
 * work goes to a paid, remote model or stays offline, and why.
 */
export function describeModel(app: App, agent: Agent): string {
  if (agent.model === 'scripted') {
    return hasPlugin(app, 'model-openai')
      ? 'model scripted (offline; export DEEPSEEK_API_KEY or OPENAI_API_KEY to switch to a real model, no edit of cordis.yml needed)'
      : 'model scripted (offline)'
  }
  const config = openAIConfig(app, agent.model)
  const where = config?.baseUrl ? ` at ${hostOf(config.baseUrl)}` : ''
  const variable = config && !config.apiKey ? (config.apiKeyEnv ?? PRESET_KEYS[config.preset ?? 'deepseek']) : undefined
  const why = variable ? `, because ${variable} is set; without it the offline scripted model answers` : ''
  return `model ${agent.model} (a real model provider${where}${why})`
}

/** The config of the loaded model-openai entry that registers the provider `name`, if one does. */
function openAIConfig(app: App, name: string): OpenAIEntryConfig | undefined {
  for (const entry of app.loader.entries) {
    if (entry.status !== 'loaded' || entry.fiber?.name !== 'model-openai') continue
    const config = (entry.fiber.config ?? {}) as OpenAIEntryConfig
    const preset = config.preset ?? 'deepseek'
    if ((config.name ?? (preset === 'custom' ? 'openai-compatible' : preset)) === name) return config
  }
  return undefined
}

/** Only the host: a base URL may carry credentials or tokens in its path or query. */
function hostOf(url: string): string {
  try {
    return new URL(url).host
  } catch {
    return 'a configured URL'
  }
}
