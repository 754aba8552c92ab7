import { existsSync, statSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { Command, CommanderError } from 'commander'
import { type App, type StartAppOptions, startApp } from './app.ts'
import type { CliIO, CommandContext, CommandDefinition, GlobalOptions } from './command.ts'
import { commands } from './commands/index.ts'
import { DEFAULT_LOG_LEVEL, LogLevel, parseLogLevel } from './console-exporter.ts'
import { describeError, userConfigDir } from '@goalkeeper/kit'
import { MODES, type PermissionMode } from '@goalkeeper/permissions'
import { DATABASE_VARIABLE } from './commands/lookup/database.ts'
import { PERMISSIONS_VARIABLE } from './commands/lookup/permissions.ts'
import { type Failure, failureJson, failureLine, failureOf, HostError, usageFailureOf } from './errors.ts'
import { ExitCode } from './exit-codes.ts'
import { build, defaultComposition } from './home.ts'
import { programName } from './invocation.ts'
import { redact } from './redact.ts'
import { outputWidth, wrapText } from './commands/render/text.ts'

interface RawGlobals {
  config: string
  cwd?: string
  logLevel?: string
  verbose: number
  watch?: boolean
  json?: boolean
  permissions?: string
  projectInstructions: boolean
  model?: string
  showReasoning?: boolean
}

export async function readVersion(): Promise<string> {
  if (build) return build.version
  const manifest = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'))
  return manifest.version
}

/** Runs the CLI on `argv` (as in process.argv, with the node and script paths first); resolves to the exit code. */
export async function runCli(argv: string[], io: CliIO = process, definitions: CommandDefinition[] = commands): Promise<number> {
  const apps: App[] = []
  let exitCode: number = ExitCode.OK
  let globals: GlobalOptions | undefined
  let usageError: Failure | undefined
  const onUsageError = (failure: Failure) => {
    usageError = failure
    io.stderr.write(redact(failureLine(failure)))
  }
  const program = createProgram(await readVersion(), io, onUsageError)
  for (const definition of definitions) {
    const command = program.command(definition.name, { isDefault: definition.isDefault }).description(definition.description)
    command.configureOutput({ outputError: (text) => onUsageError(usageFailureOf(text, `${programName()} ${definition.name} --help`)) })
    definition.configure?.(command)
    command.action(async (...params: unknown[]) => {
      globals = resolveGlobals(program.opts<RawGlobals>(), program.getOptionValueSource('config') !== 'default')
      const context = createContext(globals, io, apps)
      // commander builds this object from the options the command's configure declared, as its Options names them
      exitCode = await definition.run(context, params.slice(0, -2), params.at(-2) as object)
    })
  }
  try {
    await program.parseAsync(argv)
  } catch (error) {
    // Before the action ran (a usage error) the global options are not resolved: look for --json itself.
    const json = globals?.json ?? argv.slice(2).includes('--json')
    exitCode = error instanceof CommanderError ? reportUsageError(error, io, json, usageError) : reportError(error, io, globals, json)
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

function createProgram(version: string, io: CliIO, onUsageError: (failure: Failure) => void): Command {
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
    .option('--permissions <mode>', `what tool calls may do: ${MODES.join('|')} (default: the cordis.yml's, workspace-write)`)
    .option('--no-project-instructions', 'leave the AGENTS.md files out of the system prompt')
    .option('--model <provider[/model]>', 'the model provider (and model id) for this run, e.g. deepseek/deepseek-reasoner; check shows which is used')
    .option('--show-reasoning', 'print the model\'s reasoning text to stderr as it is recorded')
    .helpOption('-h, --help', 'show help')
    .helpCommand(false)
    // Every command's help also lists the global options: they are written after the command as well.
    .configureHelp({ showGlobalOptions: true })
    .addHelpText('after', `
Exit codes: 0 done (goal complete), 2 goal blocked, 3 paused or cancelled, 4 out of rounds,
5 budget used up, 6 the model refused, 7 answer not valid against --output-schema,
8 control refused, 9 session not held by any process, 10 its process gone,
64 bad command line or configuration, 70 runtime error, 74 session not saved,
130 forced exit (details: goalkeeper goal --help).`)
    .exitOverride()
    .configureOutput({
      // Commander fits its own columns; the texts added after them are wrapped here.
      writeOut: (text) => io.stdout.write(wrapText(text, outputWidth(io.stdout))),
      writeErr: (text) => io.stderr.write(wrapText(text, outputWidth(io.stderr))),
      outputError: (text) => onUsageError(usageFailureOf(text, `${programName()} --help`)),
    })
}

function resolveGlobals(raw: RawGlobals, configGiven: boolean): GlobalOptions {
  const cwd = path.resolve(raw.cwd ?? process.cwd())
  if (raw.cwd) {
    if (!statSync(cwd, { throwIfNoEntry: false })?.isDirectory()) {
      throw new HostError(`--cwd ${raw.cwd}: not a directory`, { hint: 'pass an existing directory' })
    }
    // Plugins resolve their own relative paths (sessions, workspace) from the process cwd.
    process.chdir(cwd)
  }
  if (raw.permissions !== undefined && !(MODES as readonly string[]).includes(raw.permissions)) {
    throw new HostError(`--permissions ${raw.permissions}: not a permission mode`, { hint: `use one of ${MODES.join(', ')}` })
  }
  const base = raw.logLevel === undefined ? DEFAULT_LOG_LEVEL : parseLogLevel(raw.logLevel)
  let config = path.resolve(cwd, raw.config)
  let configSource: GlobalOptions['configSource'] = configGiven ? 'given' : 'workspace'
  // Installed goalkeeper works in any directory: without a cordis.yml of its own it runs the user's
  // ($XDG_CONFIG_HOME/goalkeeper/cordis.yml), else the one it comes with.
  if (!configGiven && !existsSync(config)) {
    const user = path.join(userConfigDir(process.env), 'cordis.yml')
    config = existsSync(user) ? user : defaultComposition()
    configSource = existsSync(user) ? 'user' : 'built-in'
  }
  return {
    config,
    configGiven,
    configSource,
    projectInstructions: raw.projectInstructions !== false,
    ...(raw.model !== undefined ? { model: raw.model } : {}),
    showReasoning: !!raw.showReasoning,
    cwd,
    logLevel: Math.min(LogLevel.debug, base + raw.verbose),
    watch: !!raw.watch,
    json: !!raw.json,
    permissions: raw.permissions as PermissionMode | undefined,
  }
}

function createContext(globals: GlobalOptions, io: CliIO, apps: App[]): CommandContext {
  return {
    globals,
    io,
    async startApp({ database, ...overrides }: Partial<StartAppOptions> & { database?: string } = {}) {
      if (!existsSync(globals.config)) throw missingConfig(globals)
      const variables = {
        ...(globals.permissions ? { [PERMISSIONS_VARIABLE]: globals.permissions } : {}),
        ...(database !== undefined ? { [DATABASE_VARIABLE]: database } : {}),
      }
      const app = await startApp({
        config: globals.config,
        logLevel: globals.logLevel,
        watch: globals.watch,
        stderr: io.stderr,
        signals: true,
        // The default cordis.yml reads its permission mode from this variable; the agent commands then check it took.
        ...(Object.keys(variables).length ? { env: { ...process.env, ...variables } } : {}),
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

/** Help and version end with 0; a refused command line has already been printed as one line. */
function reportUsageError(error: CommanderError, io: CliIO, json: boolean, usage: Failure | undefined): number {
  if (error.exitCode === 0) return ExitCode.OK
  // With no command at all commander prints the help instead of an error line.
  const failure = usage ?? { message: 'no command given', hint: `see ${programName()} --help`, exitCode: ExitCode.USAGE }
  if (json) io.stdout.write(redact(`${JSON.stringify(failureJson(failure))}\n`))
  return ExitCode.USAGE
}

/** A cordis.yml that is not there: the usual cause is running somewhere else than intended. */
function missingConfig(globals: GlobalOptions): HostError {
  const bundled = defaultComposition()
  const fallback = existsSync(bundled) ? `; the default composition is --config ${bundled}` : ''
  if (!globals.configGiven) {
    return new HostError(`no cordis.yml in ${globals.cwd}`, { hint: `pass --config <file> to use one from elsewhere${fallback}` })
  }
  return new HostError(`--config ${globals.config}: no such file`, { hint: `a relative --config starts at --cwd${fallback}` })
}

/** Prints one line (plus the stack at debug level) and returns the exit code for it. */
function reportError(error: unknown, io: CliIO, globals: GlobalOptions | undefined, json: boolean): number {
  const failure = failureOf(error)
  io.stderr.write(redact(failureLine(failure)))
  if (globals?.logLevel === LogLevel.debug && error instanceof Error && error.stack) io.stderr.write(redact(`${error.stack}\n`))
  if (json) io.stdout.write(redact(`${JSON.stringify(failureJson(failure))}\n`))
  return failure.exitCode
}
