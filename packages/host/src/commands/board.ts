import { existsSync, statSync } from 'node:fs'
import path from 'node:path'
import { InvalidArgumentError } from 'commander'
import type { App } from '../app.ts'
import type { CommandContext } from '../command.ts'
import { defineCommand } from '../command.ts'
import { HostError } from '../errors.ts'
import { ExitCode } from '../exit-codes.ts'
import { controlChannel } from './lookup/controls.ts'
import { assertSessions, databaseEnv } from './lookup/database.ts'
import { workerSummaryFold } from './lookup/worker-fold.ts'
import { cliCommand } from './render/hints.ts'

export interface BoardOptions {
  host: string
  port: number
  token?: string
  database?: string
  project: string[]
}

const collect = (value: string, previous: string[]) => [...previous, value]

/**
 * One app per project, loaded down to its session store from the project's own cordis.yml (else the one the
 * CLI uses) and with the project as the working directory, so its store is the one its own commands use.
 */
async function projectApp(cli: CommandContext, dir: string, signals: boolean): Promise<App> {
  const root = path.resolve(dir)
  if (!statSync(root, { throwIfNoEntry: false })?.isDirectory()) throw new HostError(`board: --project ${dir}: not a directory`, { hint: 'pass the directory of a project' })
  const own = path.join(root, 'cordis.yml')
  const back = process.cwd()
  // The file store finds a project's sessions from the working directory when it starts.
  process.chdir(root)
  try {
    const app = await cli.startApp({ until: (ctx) => !!ctx.get('sessions'), reportsFailedEntries: true, signals, ...(existsSync(own) ? { config: own } : {}) })
    assertSessions(app, { ...cli.globals, cwd: root }, `board --project ${dir}`)
    return app
  } finally {
    process.chdir(back)
  }
}

function parsePort(value: string): number {
  const port = Number(value)
  if (!/^\d+$/.test(value) || port > 65535) throw new InvalidArgumentError('expected a port number (0 for a free one).')
  return port
}

export default defineCommand<BoardOptions>({
  name: 'board',
  description: 'serve the goal board: every goal of the session stores in the browser, live, with controls',
  configure: (command) =>
    command
      .option('--host <address>', 'the address to listen on; anything but loopback needs --token', '127.0.0.1')
      .option('--port <n>', 'the port to listen on (0: a free one)', parsePort, 0)
      .option('--token <text>', 'the token the page needs (default: a fresh random one per run); at least 16 characters')
      .option('--project <dir>', 'show the sessions of this project (repeat it for several); default: the workspace\'s', collect, [])
      .option('--database <url>', 'show the sessions of this PostgreSQL database (every machine that writes to it); alone: instead of files')
      .addHelpText('after', `
Prints the board's address on stdout, with the token it needs; the page keeps the token in a cookie
for this address only. Goals are grouped by state with their rounds and spend against each budget;
a goal's page shows its rounds (tool calls, edits as diffs, checks, compactions, stops, spend per
round), the final answer and the commands to resume it. The page updates when the session store
changes. --project (repeated) shows several projects' sessions, with --database a fleet's too.
A goal whose process runs on this machine (or, with --database, a fleet worker) can be paused,
resumed, cleared, given a larger budget or round cap, and its waiting approvals answered from its
page (through that process, never by writing the session here). Ctrl-C stops the board.

Exit codes: 0 stopped, 64 bad command line or configuration (a --host beyond loopback without --token).`),
  async run(cli, _args, options) {
    // Loaded here: the other commands never pay for the board.
    const { BoardError, startBoard } = await import('@goalkeeper/board')
    const projects = options.project
    // The first app takes the signals: Ctrl-C stops it, and with it the board.
    const app = projects.length ? await projectApp(cli, projects[0], true) : await cli.startApp({ until: (ctx) => !!ctx.get('sessions'), reportsFailedEntries: true, signals: true, ...databaseEnv(options.database) })
    if (!projects.length) assertSessions(app, cli.globals, 'board', databaseEnv(options.database).database)
    const apps = [app]
    for (const dir of projects.slice(1)) apps.push(await projectApp(cli, dir, false))
    if (projects.length && options.database !== undefined) {
      const fleet = await cli.startApp({ until: (ctx) => !!ctx.get('sessions'), reportsFailedEntries: true, signals: false, ...databaseEnv(options.database) })
      assertSessions(fleet, cli.globals, 'board', options.database)
      apps.push(fleet)
    }
    const sessions = apps.map((each) => each.ctx.get('sessions')!)
    let board
    try {
      board = await startBoard({
        sessions,
        host: options.host,
        port: options.port,
        ...(options.token !== undefined ? { token: options.token } : {}),
        folds: { worker: workerSummaryFold },
        // With a fleet's database, a goal no process here holds is controlled through its worker.
        ...(options.database !== undefined ? { controls: controlChannel(cli, options.database) } : {}),
        resumeCommands: (id) => [cliCommand(cli.globals, 'goal', '--session', id), cliCommand(cli.globals, 'show', id)],
        log: (line) => cli.note(line),
      })
    } catch (error) {
      if (error instanceof BoardError) throw new HostError(`board: ${error.message}`, { hint: 'goalkeeper board --host ADDRESS --token TEXT' })
      throw new HostError(`board: cannot listen on ${options.host}:${options.port}: ${(error as Error).message}`)
    }
    const opened = board
    app.ctx.effect(() => () => opened.close())
    for (const each of sessions) cli.note(`board of ${each.dir}`)
    // The address carries the token: the page's only key.
    cli.print(board.url)
    await app.closed
    return ExitCode.OK
  },
})
