import Schema from 'schemastery'
import { strictConfig } from '@goalkeeper/policy'

/**
 * Failures of the environment rather than of the model: timeouts, refusals by a user or a sandbox
 * (PERMISSION_DENIED is the workspace tools' code), the API failure codes of DESIGN.md section 3 that a
 * tool calling a service may pass on, and calls cut short by a cancel.
 */
const DEFAULT_IGNORED = ['TIMEOUT', 'COMMAND_TIMEOUT', 'DENIED', 'PERMISSION_DENIED', 'RATE_LIMIT', 'QUOTA', 'SERVER', 'TRANSPORT', 'ABORTED']

const Fields = Schema.object({
  limit: Schema.natural().min(1).default(6)
    .description('Consecutive mistake steps (tools failed, none succeeded) that stop the run.'),
  countInvalidCalls: Schema.boolean().default(true)
    .description('Count calls the model got wrong (INVALID_JSON, INVALID_ARGUMENTS, UNKNOWN_TOOL) as failures.'),
  ignoreErrorCodes: Schema.array(Schema.string().min(1)).default(DEFAULT_IGNORED)
    .description('Tool error codes that are not the model\'s mistake: such a failure neither counts nor resets.'),
  decisionTimeoutMs: Schema.natural().min(1).default(30_000)
    .description('How long to wait for a mistake-limit/reached decision before stopping.'),
  answerEscalations: Schema.boolean().default(true)
    .description('Answer policy/escalate (loop-guard) as an immediate limit hit, so the decision hook rules there too.'),
})

export type MistakeLimitConfig = Schemastery.TypeT<typeof Fields>

/** Rejects unknown keys, so a typo does not silently fall back to a default. */
export const Config = strictConfig(Fields)
