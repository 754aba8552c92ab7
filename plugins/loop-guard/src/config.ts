import Schema from 'schemastery'
import { strictConfig } from '@goalkeeper/policy'

const Fields = Schema.object({
  softThreshold: Schema.natural().min(2).default(3)
    .description('Repeats after which a recovery hint is steered into the next step; it fires again every softThreshold repeats.'),
  hardThreshold: Schema.natural().default(5)
    .description('Repeats after which the run is escalated and, without a verdict, stopped. 0 disables the stop.'),
  maxCyclePeriod: Schema.natural().min(1).max(6).default(3)
    .description('Longest call sequence watched for cycles (A-B-A-B is 2). 1 turns cycle detection off.'),
  ignoreKeys: Schema.array(Schema.string().min(1)).default(['task_progress'])
    .description('Argument keys ignored at every depth when comparing calls.'),
  collapseWhitespace: Schema.boolean().default(true)
    .description('Compare strings with runs of whitespace collapsed and ends trimmed.'),
  normalizePaths: Schema.boolean().default(true)
    .description('Compare path-like strings with `./`, repeated and trailing slashes removed.'),
  exclude: Schema.array(Schema.string().min(1)).default([])
    .description('Tool name patterns (`*` wildcard) that are never tracked; they neither count nor break a streak.'),
  poll: Schema.array(Schema.string().min(1)).default([])
    .description('Tool name patterns (`*` wildcard) judged by result changes: a changed result is progress.'),
  argumentsPreviewChars: Schema.natural().min(20).max(1000).default(200)
    .description('Characters of canonical arguments quoted in hints and stop messages.'),
  escalationTimeoutMs: Schema.natural().min(1).default(60_000)
    .description('How long to wait for a policy/escalate verdict before stopping on its own.'),
})

export type LoopGuardConfig = Schemastery.TypeT<typeof Fields>

/** Rejects unknown keys (a typo must not silently fall back to a default) and inconsistent thresholds. */
export const Config = strictConfig(Fields, (config) => {
  if (config.hardThreshold !== 0 && config.hardThreshold <= config.softThreshold) {
    throw new Schema.ValidationError(
      `must be greater than softThreshold (${config.softThreshold}), or 0 to disable the stop, but got ${config.hardThreshold}`,
      { path: ['hardThreshold'] },
    )
  }
})
