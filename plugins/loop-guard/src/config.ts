import Schema from 'schemastery'
import { strictConfig, ToolKinds, volatileMasker, VolatilePatterns } from '@goalkeeper/policy'

const Fields = Schema.object({
  softThreshold: Schema.natural().min(2).default(3)
    .description('Repeats of the same call with the same result after which a hint is steered; again every softThreshold repeats.'),
  hardThreshold: Schema.natural().default(5)
    .description('Repeats of the same call with the same result that stop the run (after escalating). 0: hints only.'),
  sameErrorHint: Schema.natural().min(2).default(2)
    .description('Identical failures of the same call (no write in between) after which a hint is steered.'),
  sameErrorLimit: Schema.natural().default(4)
    .description('Identical failures of the same call (no write in between) that stop the run. 0: hints only.'),
  maxCyclePeriod: Schema.natural().min(1).max(12).default(6)
    .description('Longest sequence of calls watched for cycles (A-B-A-B is 2). 1 turns cycle detection off.'),
  cycleHint: Schema.natural().min(1).default(2)
    .description('Calls in a row that each repeat the call one cycle earlier, with the same result, after which a hint is steered.'),
  cycleLimit: Schema.natural().default(4)
    .description('Calls in a row that each repeat the call one cycle earlier, with the same result, that stop the run. 0: hints only.'),
  blockRepetition: Schema.natural().min(1).default(2)
    .description('The repetition of a block of calls (1: the first time it is redone, 2: the second) from which its calls count toward blockHint and blockLimit.'),
  blockHint: Schema.natural().min(1).default(2)
    .description('Calls in a row, each redoing (same arguments, same result) a call made blockRepetition times before in the goal, after which a hint is steered.'),
  blockLimit: Schema.natural().default(4)
    .description('Such calls in a row that stop the run. 0: hints only.'),
  pollHint: Schema.natural().min(2).default(20)
    .description('Calls in a row of the same call whose result keeps changing (polling) after which a hint is steered.'),
  pollLimit: Schema.natural().default(30)
    .description('Calls in a row of the same call whose result keeps changing (polling) that stop the run. 0: never.'),
  nearIdentical: Schema.boolean().default(true)
    .description('Calls whose arguments differ only in numbers, shell comments or whitespace, with the same result, are the same call.'),
  argumentSimilarity: Schema.number().min(0).max(1).default(0)
    .description('Consecutive calls of one tool whose arguments are at least this similar (0..1), with the same result, are the same call. 0: off.'),
  volatilePatterns: VolatilePatterns
    .description('Regular expressions masked in results before comparing them (durations, timestamps, temp paths, PIDs).'),
  writeKinds: ToolKinds(['edit'])
    .description('Kinds of tools (as each tool declares) whose success changes the workspace: the same-error counts start over.'),
  writeTools: Schema.array(Schema.string().min(1)).default([])
    .description('Tool name patterns (`*` wildcard) whose success changes the workspace too, whatever their kind.'),
  ignoreKeys: Schema.array(Schema.string().min(1)).default(['task_progress'])
    .description('Argument keys ignored at every depth when comparing calls.'),
  collapseWhitespace: Schema.boolean().default(true)
    .description('Compare strings with runs of whitespace collapsed and ends trimmed.'),
  normalizePaths: Schema.boolean().default(true)
    .description('Compare path-like strings with `./`, repeated and trailing slashes removed.'),
  exclude: Schema.array(Schema.string().min(1)).default([])
    .description('Tool name patterns (`*` wildcard) that are never tracked; they neither count nor break a streak.'),
  poll: Schema.array(Schema.string().min(1)).default([])
    .description('Tool name patterns (`*` wildcard) whose repeated successful calls are bounded only by pollLimit, changed or not.'),
  argumentsPreviewChars: Schema.natural().min(20).max(1000).default(200)
    .description('Characters of canonical arguments quoted in hints and stop messages.'),
  escalationTimeoutMs: Schema.natural().min(1).default(60_000)
    .description('How long to wait for a policy/escalate verdict before stopping on its own.'),
})

export type LoopGuardConfig = Schemastery.TypeT<typeof Fields>

/** Each stop must come after its hint, or be 0 (hints only). */
const PAIRS = [
  ['softThreshold', 'hardThreshold'],
  ['sameErrorHint', 'sameErrorLimit'],
  ['cycleHint', 'cycleLimit'],
  ['blockHint', 'blockLimit'],
  ['pollHint', 'pollLimit'],
] as const

/** Rejects unknown keys (a typo must not silently fall back to a default), stops before their hints and bad patterns. */
export const Config = strictConfig(Fields, (config) => {
  for (const [hint, limit] of PAIRS) {
    if (config[limit] !== 0 && config[limit] <= config[hint]) {
      throw new Schema.ValidationError(
        `must be greater than ${hint} (${config[hint]}), or 0 to disable the stop, but got ${config[limit]}`,
        { path: [limit] },
      )
    }
  }
  volatileMasker(config.volatilePatterns, 'volatilePatterns')
})
