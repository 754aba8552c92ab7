import { statSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { Command, CommanderError } from 'commander'
import { type App, type StartAppOptions, startApp } from './app.ts'
import type { CommandContext, CommandDefinition, GlobalOptions } from './command.ts'
import { commands } from './commands/index.ts'
import { DEFAULT_LOG_LEVEL, LogLevel, parseLogLevel } from './console-exporter.ts'
import { describeError, HostError } from './errors.ts'
import { ExitCode } from './exit-codes.ts'
import { redact } from './redact.ts'

export interface CliIO {
  stdout: { write(text: string): unknown; isTTY?: boolean }
  stderr: { write(text: string): unknown; isTTY?: boolean }
  /** Input for interactive commands (chat); default process.stdin. */
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean }
}

interface RawGlobals {
  config: string
  cwd?: string
  logLevel?: string
  verbose: number
  watch?: boolean
  json?: boolean
}

async function readVersion(): Promise<string> {
  const manifest = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'))
  return manifest.version
}

/** Runs the CLI on `argv` (as in process.argv, with the node and script paths first); resolves to the exit code. */
export async function runCli(argv: string[], io: CliIO = process, definitions: CommandDefinition[] = commands): Promise<number> {
  const apps: App[] = []
  let exitCode: number = ExitCode.OK
  let globals: GlobalOptions | undefined
  const program = createProgram(await readVersion(), io)
  for (const definition of definitions) {
    const command = program.command(definition.name, { isDefault: definition.isDefault }).description(definition.description)
    definition.configure?.(command)
    command.action(async (...params: unknown[]) => {
      globals = resolveGlobals(program.opts<RawGlobals>())
      const context = createContext(globals, io, apps)
      exitCode = await definition.run(context, params.slice(0, -2), params.at(-2) as Record<string, any>)
    })
  }
  try {
    await program.parseAsync(argv)
  } catch (error) {
    exitCode = reportError(error, io, globals)
  } finally {
    // Shut down in reverse start order; a failure here must not hide the command's own result.
    for (const app of apps.reverse()) {
      await app.shutdown().catch((error) => {
        io.stderr.write(`goalkeeper: shutdown failed: ${describeError(error)}\n`)
        exitCode = ExitCode.RUNTIME
      })
    }
  }
  return exitCode
}

function createProgram(version: string, io: CliIO): Command {
  return new Command('goalkeeper')
    .description('Pursue goals with a coding agent composed of Cordis plugins (cordis.yml).')
    .usage('[global options] <command>')
    .version(version, '-V, --version', 'print the version')
    .option('--config <path>', 'the cordis.yml to load', 'cordis.yml')
    .option('--cwd <dir>', 'the workspace: run as if started in <dir> (relative paths, including --config, start there)')
    .option('--log-level <level>', `log level on stderr: ${Object.keys(LogLevel).join('|')} (default: warn)`)
    .option('-v, --verbose', 'one log level more (repeatable: -vv)', (_value, total: number) => total + 1, 0)
    .option('--watch', 'reload the composition when the cordis.yml changes')
    .option('--json', 'print results as one JSON object per line on stdout')
    .helpOption('-h, --help', 'show help')
    .helpCommand(false)
    .addHelpText('after', `
Exit codes: 0 done (goal complete), 2 goal blocked, 3 paused or cancelled, 4 out of rounds,
64 bad command line or configuration, 70 runtime error, 130 forced exit (details: goalkeeper goal --help).`)
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      outputError: (text, write) => write(`goalkeeper: ${text.replace(/^error: /, '').trimEnd()} (see goalkeeper --help)\n`),
    })
}

function resolveGlobals(raw: RawGlobals): GlobalOptions {
  const cwd = path.resolve(raw.cwd ?? process.cwd())
  if (raw.cwd) {
    if (!statSync(cwd, { throwIfNoEntry: false })?.isDirectory()) {
      throw new HostError(`--cwd ${raw.cwd}: not a directory`, { hint: 'pass an existing directory' })
    }
    // Plugins resolve their own relative paths (sessions, workspace) from the process cwd.
    process.chdir(cwd)
  }
  const base = raw.logLevel === undefined ? DEFAULT_LOG_LEVEL : parseLogLevel(raw.logLevel)
  return {
    config: path.resolve(cwd, raw.config),
    cwd,
    logLevel: Math.min(LogLevel.debug, base + raw.verbose),
    watch: !!raw.watch,
    json: !!raw.json,
  }
}

function createContext(globals: GlobalOptions, io: CliIO, apps: App[]): CommandContext {
  return {
    globals,
    io,
    async startApp(overrides: Partial<StartAppOptions> = {}) {
      const app = await startApp({
        config: globals.config,
        logLevel: globals.logLevel,
        watch: globals.watch,
        stderr: io.stderr,
        signals: true,
        ...overrides,
      })
      apps.push(app)
      return app
    },
    print: (line) => void io.stdout.write(redact(`${line}\n`)),
    printJson: (value) => void io.stdout.write(redact(`${JSON.stringify(value)}\n`)),
    note: (line) => void io.stderr.write(redact(`goalkeeper: ${line}\n`)),
  }
}

/** Prints one line (plus the stack at debug level) and returns the exit code for it. */
function reportError(error: unknown, io: CliIO, globals: GlobalOptions | undefined): number {
  if (error instanceof CommanderError) {
    // Help and version exit with 0; commander has already printed its own error text.
    return error.exitCode === 0 ? ExitCode.OK : ExitCode.USAGE
  }
  const known = error instanceof HostError
  const exitCode = known ? error.exitCode : ExitCode.RUNTIME
  const hint = known ? error.hint : 'run with --log-level debug for the stack trace'
  const message = known ? error.message : `unexpected error: ${describeError(error)}`
  io.stderr.write(redact(`goalkeeper: ${message}${hint ? ` (hint: ${hint})` : ''}\n`))
  if (globals?.logLevel === LogLevel.debug && error instanceof Error && error.stack) io.stderr.write(redact(`${error.stack}\n`))
  if (globals?.json) io.stdout.write(redact(`${JSON.stringify({ type: 'error', message, hint, exitCode })}\n`))
  return exitCode
}
