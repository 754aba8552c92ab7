import { InvalidArgumentError } from 'commander'
import { defineCommand } from '../command.ts'
import { HostError } from '../errors.ts'
import { ExitCode } from '../exit-codes.ts'
import { assertSessions, databaseEnv } from './lookup/database.ts'
import { workerSummaryFold } from './lookup/worker-fold.ts'
import { cliCommand } from './render/hints.ts'

export interface BoardOptions {
  host: string
  port: number
  token?: string
  database?: string
}

function parsePort(value: string): number {
  const port = Number(value)
  if (!/^\d+$/.test(value) || port > 65535) throw new InvalidArgumentError('expected a port number (0 for a free one).')
  return port
}

export default defineCommand<BoardOptions>({
  name: 'board',
  description: 'serve the goal board: every goal of the session store in the browser, live (read-only)',
  configure: (command) =>
    command
      .option('--host <address>', 'the address to listen on; anything but loopback needs --token', '127.0.0.1')
      .option('--port <n>', 'the port to listen on (0: a free one)', parsePort, 0)
      .option('--token <text>', 'the token the page needs (default: a fresh random one per run); at least 16 characters')
      .option('--database <url>', 'show the sessions of this PostgreSQL database (every machine that writes to it) instead of files')
      .addHelpText('after', `
Prints the board's address on stdout, with the token it needs; the page keeps the token in a cookie
for this address only. Goals are grouped by state with their rounds and spend against each budget;
a goal's page shows its rounds (tool calls, edits as diffs, checks, compactions, stops, spend per
round), the final answer and the commands to resume it. The page updates when the session store
changes. Sessions are only read, never written. Ctrl-C stops the board.

Exit codes: 0 stopped, 64 bad command line or configuration (a --host beyond loopback without --token).`),
  async run(cli, _args, options) {
    // Loaded here: the other commands never pay for the board.
    const { BoardError, startBoard } = await import('@goalkeeper/board')
    const app = await cli.startApp({ until: (ctx) => !!ctx.get('sessions'), reportsFailedEntries: true, signals: true, ...databaseEnv(options.database) })
    assertSessions(app, cli.globals, 'board', databaseEnv(options.database).database)
    const sessions = app.ctx.get('sessions')!
    let board
    try {
      board = await startBoard({
        sessions,
        host: options.host,
        port: options.port,
        ...(options.token !== undefined ? { token: options.token } : {}),
        folds: { worker: workerSummaryFold },
        resumeCommands: (id) => [cliCommand(cli.globals, 'goal', '--session', id), cliCommand(cli.globals, 'show', id)],
        log: (line) => cli.note(line),
      })
    } catch (error) {
      if (error instanceof BoardError) throw new HostError(`board: ${error.message}`, { hint: 'goalkeeper board --host ADDRESS --token TEXT' })
      throw new HostError(`board: cannot listen on ${options.host}:${options.port}: ${(error as Error).message}`)
    }
    const opened = board
    app.ctx.effect(() => () => opened.close())
    cli.note(`board of ${sessions.dir}`)
    // The address carries the token: the page's only key.
    cli.print(board.url)
    await app.closed
    return ExitCode.OK
  },
})
