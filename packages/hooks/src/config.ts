import Schema from 'schemastery'
import { EVENT_SPELLINGS } from './events.ts'

const Matcher = Schema.union([
  Schema.string(),
  Schema.object({
    tool: Schema.string().description('A tool name or kind, `|` between alternatives, `*` a wildcard.'),
    command: Schema.string().description('A glob on run_command\'s command line (`*` matches anything).'),
    path: Schema.string().description('A glob on the workspace-relative path a tool touches (`**` any depth; no `/`: the file name).'),
  }),
]).description('What the hook applies to. A string is the tool name or kind (tool events), the session source (session-start), the goal event (goal-changed) or the trigger (before-compact).')

export const HookSpec = Schema.object({
  event: Schema.union(EVENT_SPELLINGS).required().description('When the hook runs, in goalkeeper\'s or Claude Code\'s spelling.'),
  matcher: Matcher,
  command: Schema.string().required().description('A shell command (`sh -c`), run as the user outside the sandbox, with the event as JSON on stdin.'),
  name: Schema.string().description('A label for logs and records (default: the command).'),
  timeout: Schema.natural().min(1).default(60).description('Seconds before the hook\'s process group is killed.'),
  maxOutput: Schema.natural().min(1024).default(65536).description('Bytes kept of stdout and of stderr each; the rest is discarded.'),
})

export const Config = Schema.object({
  hooks: Schema.array(HookSpec).default([]).description('The hooks, run in this order where order matters (argument rewrites).'),
  continueLimit: Schema.natural().default(3).description('How many times turn-end hooks may make one turn go on.'),
})

export type HooksConfig = Schemastery.TypeT<typeof Config>
export type HookSpecConfig = Schemastery.TypeT<typeof HookSpec>
