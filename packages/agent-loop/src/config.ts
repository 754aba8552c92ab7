import Schema from 'schemastery'
import { DEFAULT_SYSTEM_PROMPT } from './prompt.ts'

// Anthropic after the two older entries: exporting its key beside one of theirs does not switch a setup that
// already runs to another model (and bill); `--model anthropic` or this list picks it first.
export const DEFAULT_MODELS = ['deepseek', 'openai', 'anthropic', 'scripted']

export const Config = Schema.object({
  model: Schema.array(Schema.string()).default(DEFAULT_MODELS)
    .description('Provider names in order of preference; an agent created without `model` gets the first registered one.'),
  system: Schema.string().default(DEFAULT_SYSTEM_PROMPT).description('Base system prompt of every agent.'),
  maxSteps: Schema.natural().min(1).default(64).description('Safety bound on model calls in one turn.'),
  maxTokens: Schema.natural().min(1).description('Output token limit passed to the model (provider default when unset).'),
  compaction: Schema.object({
    enabled: Schema.boolean().default(true).description('Compact the history before a request would fill the context window, and once on CONTEXT_OVERFLOW.'),
    threshold: Schema.number().min(0.1).max(1).default(0.8).description('Share of the context window an estimated request may fill before the history is compacted.'),
    target: Schema.number().min(0.05).max(1).default(0.5).description('Share of the context window a compacted request aims at (recent exchanges kept verbatim fill what the summary leaves).'),
    summaryMaxTokens: Schema.natural().min(64).default(2000).description('Output limit of the summary call; a longer summary is refused and the fallback applies.'),
    contextWindow: Schema.natural().min(1).description('Context window in tokens for providers that do not report one (none: such providers compact only on CONTEXT_OVERFLOW).'),
  }).default({ enabled: true, threshold: 0.8, target: 0.5, summaryMaxTokens: 2000 } as any).description('Context compaction (see README).'),
})

export type Config = Schemastery.TypeT<typeof Config>
