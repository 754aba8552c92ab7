import { InvalidArgumentError } from 'commander'
import type { WriteBytes } from '@goalkeeper/acp'
import { parseDuration } from '@goalkeeper/kit'
import type { CliIO } from '../command.ts'
import { defineCommand } from '../command.ts'
import { HostError } from '../errors.ts'
import { ExitCode } from '../exit-codes.ts'
import { docFile } from '../home.ts'
import { readVersion } from '../program.ts'
import { assertPermissions } from './lookup/permissions.ts'
import { assertComposition, assertServices } from './lookup/services.ts'

/**
 * Gives the ACP connection stdout to itself: whatever else would be written there (a plugin's console.log,
 * a library's banner) goes to stderr, so that stdout carries only JSON-RPC. Returns the writer for the
 * connection and a function that puts stdout back.
 */
function takeStdout(io: CliIO): { write: WriteBytes; release: () => void } {
  const stdout = io.stdout as NodeJS.WriteStream
  const own = stdout.write
  const write: WriteBytes = (chunk, done) => void (own as (chunk: Uint8Array, done: (error?: Error | null) => void) => boolean).call(stdout, chunk, done)
  if (stdout !== process.stdout) return { write, release: () => {} }
  stdout.write = ((chunk: any, ...rest: any[]) => (process.stderr.write as any)(chunk, ...rest)) as typeof stdout.write
  return { write, release: () => void (stdout.write = own) }
}

/** The environment variable an editor's settings can set instead of passing --permission-timeout. */
const TIMEOUT_VARIABLE = 'GOALKEEPER_PERMISSION_TIMEOUT'
const DURATION_HINT = 'a duration with its unit, such as 90s, 10m or 1h'

function parseTimeout(value: string): number {
  const ms = parseDuration(value)
  if (ms === undefined) throw new InvalidArgumentError(`expected ${DURATION_HINT}.`)
  return ms
}

/** The option, else the variable, else the server's default (5 minutes); a bad variable is refused like a bad option. */
function permissionTimeout(option: number | undefined, env: NodeJS.ProcessEnv): number | undefined {
  if (option !== undefined) return option
  const text = env[TIMEOUT_VARIABLE]
  if (!text) return undefined
  const ms = parseDuration(text)
  if (ms === undefined) throw new HostError(`${TIMEOUT_VARIABLE}=${text}: not a duration`, { hint: `set it to ${DURATION_HINT}` })
  return ms
}

export interface AcpOptions {
  permissionTimeout?: number
}

export default defineCommand<AcpOptions>({
  name: 'acp',
  description: 'serve the Agent Client Protocol on stdin/stdout, for editors such as Zed',
  configure: (command) =>
    command
      .option('--permission-timeout <duration>', `how long a permission question waits for the editor's answer before the call is denied, e.g. 90s or 10m (default: ${TIMEOUT_VARIABLE}, else 5m)`, parseTimeout)
      .addHelpText('after', `
An editor starts this command and talks JSON-RPC with it over stdin/stdout; logs go to stderr. Each
session the editor opens works in the folder it names; sessions are stored as for the other commands,
so \`goalkeeper sessions\` and \`goalkeeper show\` see them. Ctrl-C or the editor closing the connection
stops the running work (a goal round pauses its goal) and shuts down in order. Exit code 0, or 64 when
the composition does not load.

The editor's settings (Zed's agent_servers entry) and what a client sees:
${docFile('packages/acp/README.md')}`),
  async run(cli, _args, options) {
    // Before anything starts: a bad value is the person's mistake, said on stderr with exit 64.
    const permissionTimeoutMs = permissionTimeout(options.permissionTimeout, process.env)
    const stdout = takeStdout(cli.io)
    try {
      const app = await cli.startApp({ reportsFailedEntries: true })
      assertComposition(app, cli.globals)
      assertServices(app, cli.globals, ['sessions', 'agents'], 'acp')
      assertPermissions(app, cli.globals)
      // Loaded here, not at the top: the SDK and its schemas are only this command's cost.
      const { serveAcp, stdioStream } = await import('@goalkeeper/acp')
      const input = cli.io.stdin ?? process.stdin
      const server = serveAcp(app.ctx, stdioStream(input, stdout.write), { version: await readVersion(), permissionTimeoutMs })
      // The first Ctrl-C ends the connection the way a client leaving does; another one is the ordered shutdown's.
      let interrupted = false
      app.onInterrupt(() => {
        if (interrupted) return false
        interrupted = true
        void server.close()
        return true
      })
      await Promise.race([server.closed, app.closed])
      await server.close()
      return ExitCode.OK
    } finally {
      stdout.release()
    }
  },
})
