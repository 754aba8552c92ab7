import type { Command } from 'commander'
import type { PermissionMode } from '@goalkeeper/permissions'
import type { App, StartAppOptions } from './app.ts'

/** The streams a command writes to and reads from (process by default; tests pass their own). */
export interface CliIO {
  stdout: { write(text: string): unknown; isTTY?: boolean; columns?: number }
  stderr: { write(text: string): unknown; isTTY?: boolean; columns?: number }
  /** Input for interactive commands (chat); default process.stdin. */
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean }
}

/** The global options, resolved: `goalkeeper [global options] <command>`. */
export interface GlobalOptions {
  /** Absolute path of the cordis.yml. */
  config: string
  /** `--config` was given (else `config` is the cordis.yml of the working directory). */
  configGiven?: boolean
  /**
   * Where `config` came from: `--config`, the workspace's cordis.yml, the user's
   * ($XDG_CONFIG_HOME/goalkeeper/cordis.yml) when the workspace has none, or else the composition goalkeeper comes with.
   */
  configSource?: 'given' | 'workspace' | 'user' | 'built-in'
  /** AGENTS.md files go into the system prompt (off with `--no-project-instructions`). */
  projectInstructions?: boolean
  /** `--model PROVIDER[/MODEL]`. */
  model?: string
  /** `--show-reasoning`: reasoning text to stderr. */
  showReasoning?: boolean
  /** Absolute working directory (the process has already changed into it). */
  cwd: string
  /** 0 error, 1 warn, 2 info, 3 debug. */
  logLevel: number
  watch: boolean
  /** One JSON value per line on stdout instead of text. */
  json: boolean
  /** `--permissions MODE`: the permission mode for this run (cordis.yml reads it as GOALKEEPER_PERMISSIONS). */
  permissions?: PermissionMode
}

/** What a command gets from the CLI framework. */
export interface CommandContext {
  globals: GlobalOptions
  /** The raw streams, for commands that stream output or read input; prefer print/note for lines. */
  io: CliIO
  /**
   * Loads the composition with the global options (overridable), with SIGINT/SIGTERM handling installed.
   * Every app started here is shut down in order when the command returns. `database`: a PostgreSQL URL for
   * the session entry (`--database`), given to it as GOALKEEPER_DATABASE_URL.
   */
  startApp(overrides?: Partial<StartAppOptions> & { database?: string }): Promise<App>
  /** A line of the command's result on stdout, secrets masked. */
  print(line: string): void
  /** One JSON value as one line on stdout, secrets masked. */
  printJson(value: unknown): void
  /** Progress for the person at the terminal, on stderr. */
  note(line: string): void
}

/**
 * One CLI command, in its own file under `src/commands/` and listed in `src/commands/index.ts`.
 * `run` resolves to an exit code (see ExitCode); a thrown HostError becomes one line with its hint.
 * `Options` is the command's own interface, one field per option `configure` declares (commander's camelCase).
 */
export interface CommandDefinition<Options extends object = object> {
  name: string
  description: string
  /** Adds arguments, options and help text to the (already named and described) commander command. */
  configure?(command: Command): void
  /** `args` are the declared positional arguments in order, `options` the command's own options. */
  run(context: CommandContext, args: unknown[], options: Options): Promise<number>
  /** Run this command when none is named on the command line. */
  isDefault?: boolean
}

export const defineCommand = <Options extends object = object>(definition: CommandDefinition<Options>): CommandDefinition<Options> => definition

/** Words of a variadic argument as one text (`goalkeeper run fix the tests`). */
export function joinWords(words: unknown): string {
  return (Array.isArray(words) ? words : words === undefined ? [] : [words]).join(' ').trim()
}
