import Schema from 'schemastery'
import { EmptyResults, emptyResultMatcher, strictConfig, ToolKinds, volatileMasker, VolatilePatterns } from '@goalkeeper/policy'

const Fields = Schema.object({
  rounds: Schema.natural().min(1).default(3)
    .description('Goal rounds in a row that change nothing and end with text only or an empty reply after which the goal is blocked (no-progress).'),
  hint: Schema.boolean().default(true)
    .description('Add a hint to the system prompt of the last round allowed, so the model can still act in it.'),
  monologue: Schema.natural().default(3)
    .description('Replies in a row within one turn without a tool call, with the same or nearly the same text (or empty), that stop the turn. 0: off.'),
  textSimilarity: Schema.number().min(0).max(1).default(0.9)
    .description('How alike two replies must be (0..1, after masking numbers and spacing) to count as the same text.'),
  echo: Schema.natural().default(4)
    .description('Tool calls that found nothing (failures, empty results), in steps in a row whose text is the same or nearly and whose calls found nothing else, that stop the turn. 0: off.'),
  readKinds: ToolKinds(['read', 'search'])
    .description('Kinds of tools (as each tool declares) whose successful call is progress when it brings new information: a result, not empty, whose fingerprint was not seen before in the goal.'),
  readTools: Schema.array(Schema.string().min(1)).default([])
    .description('Tool name patterns (`*` wildcard) treated like readKinds, whatever their kind.'),
  emptyResults: EmptyResults
    .description('Regular expressions for results that found nothing (a blank result, "No matches for ..."): never new information.'),
  volatilePatterns: VolatilePatterns
    .description('Regular expressions masked in results before their fingerprints are compared (durations, timestamps, temp paths, PIDs).'),
  progressKinds: ToolKinds(['edit', 'execute', 'session'])
    .description('Kinds of tools (as each tool declares) whose successful call is progress: it ends the count of idle rounds. A tool whose calls change nothing (readOnly, such as a goal status tool) is not.'),
  progressTools: Schema.array(Schema.string().min(1)).default([])
    .description('Tool name patterns (`*` wildcard) whose successful call is progress too, whatever their kind.'),
  escalationTimeoutMs: Schema.natural().min(1).default(60_000)
    .description('How long to wait for a policy/escalate verdict before stopping on its own.'),
})

export type NoProgressConfig = Schemastery.TypeT<typeof Fields>

/** Rejects unknown keys, so a typo does not silently fall back to a default, and bad patterns. */
export const Config = strictConfig(Fields, (config) => {
  emptyResultMatcher(config.emptyResults, 'emptyResults')
  volatileMasker(config.volatilePatterns, 'volatilePatterns')
})
