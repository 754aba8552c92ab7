import type { Context } from 'cordis'
import Schema from 'schemastery'
import type { ToolDefinition } from '@goalkeeper/tools'
import type { CommandSandboxProvider } from '@goalkeeper/sandbox'
import { createWorkspace, type Workspace } from './workspace.ts'
import { readFileTool } from './tools/read-file.ts'
import { writeFileTool } from './tools/write-file.ts'
import { editFileTool } from './tools/edit-file.ts'
import { listDirTool } from './tools/list-dir.ts'
import { searchTool } from './tools/search.ts'
import { runCommandTool } from './tools/run-command.ts'
import { masking } from './secrets.ts'

export { WorkspaceError } from './errors.ts'
export type { Limits } from './workspace.ts'

export const TOOL_NAMES = ['read_file', 'write_file', 'edit_file', 'list_dir', 'search', 'run_command'] as const
export type WorkspaceToolName = (typeof TOOL_NAMES)[number]

export const name = 'workspace-tools'
export const inject = ['tools']

export const Config = Schema.object({
  root: Schema.string().description('Workspace root, resolved against the process cwd. Default: each agent\'s session cwd.'),
  maxReadBytes: Schema.natural().min(1024).default(256 * 1024).description('read_file returns at most this many bytes per call.'),
  maxOutputChars: Schema.natural().min(1000).default(30_000).description('run_command output cap (head and tail are kept).'),
  commandTimeoutMs: Schema.natural().min(1).default(120_000).description('Default run_command timeout.'),
  maxCommandTimeoutMs: Schema.natural().min(1).default(600_000).description('Largest timeout_ms a call may ask for.'),
  maxSearchResults: Schema.natural().min(1).default(200).description('search returns at most this many matching lines.'),
  searchTimeoutMs: Schema.natural().min(100).default(30_000).description('A search still running after this long is stopped (a runaway regular expression).'),
  maxListEntries: Schema.natural().min(1).default(500).description('list_dir returns at most this many entries.'),
  tools: Schema.array(Schema.union(TOOL_NAMES)).description('Allow-list of tools to register. Default (or empty): all.'),
  allowCommands: Schema.boolean().default(true).description('false never registers run_command, whatever `tools` says.'),
  scrubSecrets: Schema.boolean().default(true).description('Hide credential-like environment variables (…_API_KEY, …TOKEN, …PASSWORD, URLs with user:pass@) from commands, and mask their values in command output.'),
})

type Factory = (ws: Workspace, running: Set<{ stop(): Promise<void> }>) => ToolDefinition
const FACTORIES: Record<WorkspaceToolName, Factory> = {
  read_file: readFileTool,
  write_file: writeFileTool,
  edit_file: editFileTool,
  list_dir: listDirTool,
  search: searchTool,
  run_command: runCommandTool,
}

export const apply = (ctx: Context, config: Schemastery.TypeT<typeof Config>) => {
  const limits = {
    maxReadBytes: config.maxReadBytes,
    maxOutputChars: config.maxOutputChars,
    commandTimeoutMs: Math.min(config.commandTimeoutMs, config.maxCommandTimeoutMs),
    maxCommandTimeoutMs: config.maxCommandTimeoutMs,
    maxSearchResults: config.maxSearchResults,
    searchTimeoutMs: config.searchTimeoutMs,
    maxListEntries: config.maxListEntries,
  }
  // Optional on purpose (not in `inject`): without a session store there is nothing to protect.
  // The permission mode decides how commands run; without a permissions plugin they run as the user, as before.
  const ws = createWorkspace(config.root, limits, config.scrubSecrets, () => ctx.get('sessions')?.protectedPaths ?? { keyFiles: [], stores: [] },
    (call) => (ctx.get as (name: string) => CommandSandboxProvider | undefined)('permissions')?.commandSandbox(call) ?? { kind: 'none' })
  const running = new Set<{ stop(): Promise<void> }>()
  // schemastery turns a missing list into [], so empty means "all" (to offer none, do not load the plugin).
  const names = (config.tools?.length ? config.tools : TOOL_NAMES).filter((tool) => tool !== 'run_command' || config.allowCommands)
  ctx.effect(function* () {
    // Registered first, torn down last: commands still running are killed before the tools disappear.
    for (const name of new Set(names)) {
      const tool = FACTORIES[name](ws, running)
      yield ctx.tools.register(config.scrubSecrets ? masking(tool) : tool)
    }
    yield async () => {
      await Promise.all([...running].map((shell) => shell.stop()))
    }
  }, 'workspace-tools')
}
