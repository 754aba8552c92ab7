import Schema from 'schemastery'
import { EmptyResults, emptyResultMatcher, strictConfig, ToolKinds, volatileMasker, VolatilePatterns } from '@goalkeeper/policy'

/**
 * Failures of the environment rather than of the model: refusals by a user or a sandbox (PERMISSION_DENIED
 * is the workspace tools' code), the API failure codes of DESIGN.md section 3 that a tool calling a service
 * may pass on, and calls cut short by a cancel. Timeouts are not here: one is the environment's, a second
 * in a row is the model's (`timeoutCodes`).
 */
const DEFAULT_IGNORED = ['DENIED', 'PERMISSION_DENIED', 'RATE_LIMIT', 'QUOTA', 'SERVER', 'TRANSPORT', 'ABORTED']

const Fields = Schema.object({
  limit: Schema.natural().min(1).default(6)
    .description('Consecutive mistake steps (tools failed, none succeeded) that stop the run.'),
  window: Schema.natural().min(1).default(8)
    .description('How many of the latest judged steps (steps whose tools all failed, or where one succeeded) windowLimit looks at.'),
  windowLimit: Schema.natural().default(6)
    .description('Mistake steps among the last `window` judged steps that stop the run, successes in between or not. 0: off.'),
  staleFailures: Schema.natural().default(3)
    .description('Failures in one turn since the last success that changed anything (a writeTools call, or a result not seen before in the goal), with a success that changed nothing between them, that stop the run. 0: off.'),
  writeKinds: ToolKinds(['edit'])
    .description('Kinds of tools (as each tool declares) whose success changes the workspace: it ends a run of stale failures.'),
  writeTools: Schema.array(Schema.string().min(1)).default([])
    .description('Tool name patterns (`*` wildcard) whose success changes the workspace too, whatever their kind.'),
  emptyResults: EmptyResults
    .description('Regular expressions for results that found nothing ("No matches for ..."): such a success changes nothing.'),
  volatilePatterns: VolatilePatterns
    .description('Regular expressions masked in results before their fingerprints are compared (durations, timestamps, temp paths, PIDs).'),
  countInvalidCalls: Schema.boolean().default(true)
    .description('Count calls the model got wrong (INVALID_JSON, INVALID_ARGUMENTS, UNKNOWN_TOOL) as failures.'),
  timeoutCodes: Schema.array(Schema.string().min(1)).default(['TIMEOUT', 'COMMAND_TIMEOUT'])
    .description('Tool error codes of a timeout: a timeout counts once another follows it with no success in between (then both count).'),
  ignoreErrorCodes: Schema.array(Schema.string().min(1)).default(DEFAULT_IGNORED)
    .description('Tool error codes that are not the model\'s mistake: such a failure neither counts nor resets.'),
  decisionTimeoutMs: Schema.natural().min(1).default(30_000)
    .description('How long to wait for a mistake-limit/reached decision before stopping.'),
  answerEscalations: Schema.boolean().default(true)
    .description('Answer policy/escalate (loop-guard) as an immediate limit hit, so the decision hook rules there too.'),
})

export type MistakeLimitConfig = Schemastery.TypeT<typeof Fields>

/** Rejects unknown keys, so a typo does not silently fall back to a default, a window smaller than its limit, and bad patterns. */
export const Config = strictConfig(Fields, (config) => {
  if (config.windowLimit > config.window) {
    throw new Schema.ValidationError(`must be at most window (${config.window}), or 0 to turn the window off, but got ${config.windowLimit}`, { path: ['windowLimit'] })
  }
  emptyResultMatcher(config.emptyResults, 'emptyResults')
  volatileMasker(config.volatilePatterns, 'volatilePatterns')
})
