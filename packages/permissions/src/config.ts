import Schema from 'schemastery'

export const MODES = ['read-only', 'workspace-write', 'full'] as const
export type PermissionMode = (typeof MODES)[number]

/**
 * What a tool does, as far as the modes care: taken from the tool's declared kind (`classOfKind`), unless
 * the configuration's `classes` names the tool. `session` tools change only the session (the goal).
 */
export const TOOL_CLASSES = ['read', 'write', 'command', 'session', 'other'] as const
export type ToolClass = (typeof TOOL_CLASSES)[number]

export const RULE_ACTIONS = ['allow', 'ask', 'deny'] as const
export type RuleAction = (typeof RULE_ACTIONS)[number]

const Rule = Schema.object({
  tool: Schema.string().description('Tool name; `*` matches any characters (`github__*`). Default with `command`: run_command.'),
  command: Schema.string().description('run_command only: the command, `*` matching any characters (`npm test*`).'),
  action: Schema.union(RULE_ACTIONS).required().description('allow (whatever the mode says), ask a person, or deny.'),
  reason: Schema.string().description('Told to the model when the rule denies.'),
})
export type PermissionRule = Schemastery.TypeT<typeof Rule>

export const Config = Schema.object({
  mode: Schema.union(MODES).default('workspace-write')
    .description('read-only: no writes, no commands; workspace-write: file tools in the workspace, commands sandboxed; full: everything, commands as the user.'),
  network: Schema.boolean().default(false).description('Sandboxed commands may use the network.'),
  rules: Schema.array(Rule).default([]).description('Per tool and per command pattern; deny wins over ask, ask over allow.'),
  classes: Schema.dict(Schema.union(TOOL_CLASSES)).default({})
    .description('What a tool does (read, write, command, session, other) by its name, over what the tool declares, e.g. an MCP tool as `read` or `other`.'),
  bwrap: Schema.string().default('bwrap').description('The bubblewrap executable: a name looked up in PATH, or a path.'),
})
export type PermissionsConfig = Schemastery.TypeT<typeof Config>
