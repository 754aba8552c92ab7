import Schema from 'schemastery'
import { strictConfig } from '@goalkeeper/policy'

const Fields = Schema.object({
  rounds: Schema.natural().min(1).default(3)
    .description('Goal rounds in a row that change nothing and end with text only or an empty reply after which the goal is blocked (no-progress).'),
  hint: Schema.boolean().default(true)
    .description('Add a hint to the system prompt of the last round allowed, so the model can still act in it.'),
  monologue: Schema.natural().default(3)
    .description('Replies in a row within one turn without a tool call, with the same or nearly the same text (or empty), that stop the turn. 0: off.'),
  textSimilarity: Schema.number().min(0).max(1).default(0.9)
    .description('How alike two replies must be (0..1, after masking numbers and spacing) to count as the same text.'),
  progressTools: Schema.array(Schema.string().min(1)).default(['write_file', 'edit_file', 'run_command', 'update_goal', 'create_goal'])
    .description('Tool name patterns (`*` wildcard) whose successful call is progress: it ends the count of idle rounds.'),
  escalationTimeoutMs: Schema.natural().min(1).default(60_000)
    .description('How long to wait for a policy/escalate verdict before stopping on its own.'),
})

export type NoProgressConfig = Schemastery.TypeT<typeof Fields>

/** Rejects unknown keys, so a typo does not silently fall back to a default. */
export const Config = strictConfig(Fields)
