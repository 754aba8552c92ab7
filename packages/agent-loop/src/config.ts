import Schema from 'schemastery'
import { DEFAULT_SYSTEM_PROMPT } from './prompt.ts'

export const DEFAULT_MODELS = ['deepseek', 'openai', 'scripted']

export const Config = Schema.object({
  model: Schema.array(Schema.string()).default(DEFAULT_MODELS)
    .description('Provider names in order of preference; an agent created without `model` gets the first registered one.'),
  system: Schema.string().default(DEFAULT_SYSTEM_PROMPT).description('Base system prompt of every agent.'),
  maxSteps: Schema.natural().min(1).default(64).description('Safety bound on model calls in one turn.'),
  maxTokens: Schema.natural().min(1).description('Output token limit passed to the model (provider default when unset).'),
})

export type Config = Schemastery.TypeT<typeof Config>
