import type { ControlReply, ControlRequest } from '@goalkeeper/control'
import type { CommandContext } from '../command.ts'
import { defineCommand } from '../command.ts'
import { HostError } from '../errors.ts'
import { ExitCode } from '../exit-codes.ts'
import { controlChannel } from './lookup/controls.ts'
import { cliCommand } from './render/hints.ts'

export interface PauseOptions {
  database?: string
}

/** What holds no goal of the session any more, by the channel's codes: not held at all, or gone. */
const UNHELD = new Set(['CONTROL_NOT_HELD', 'CONTROL_QUEUED', 'CONTROL_PAUSED', 'CONTROL_FINISHED'])

/**
 * Sends one control (`source: 'cli'`) to whatever holds the session and reports it: one line on stdout
 * (a `control` line with --json) when applied, else a HostError whose exit code says why not.
 */
export async function sendCliControl(cli: CommandContext, request: ControlRequest, database: string | undefined): Promise<number> {
  let reply: ControlReply
  try {
    reply = await controlChannel(cli, database).send(request)
  } catch (error) {
    const code = (error as { code?: unknown }).code
    if (code === 'CONTROL_GONE') throw new HostError((error as Error).message, { exitCode: ExitCode.GONE, cause: error })
    if (typeof code === 'string' && UNHELD.has(code)) {
      throw new HostError((error as Error).message, {
        exitCode: ExitCode.NOT_HELD,
        hint: database === undefined ? `a fleet goal: ${cliCommand(cli.globals, request.action, request.session, '--database', 'URL')}` : undefined,
        cause: error,
      })
    }
    throw error
  }
  if (!reply.ok) throw new HostError(`${request.action} refused: ${reply.message} (${reply.code})`, { exitCode: ExitCode.CONTROL_REFUSED })
  const { status } = reply
  const by = status.fleetJob ? `its fleet job ${status.fleetJob.id} is queued again` : status.worker ? `by fleet worker ${status.worker}` : `in process ${status.pid}`
  const goal = status.goal ? `goal ${status.goal.phase}, revision ${status.goal.revision}` : undefined
  if (cli.globals.json) {
    cli.printJson({ type: 'control', session: request.session, action: request.action, pid: status.pid, worker: status.worker ?? null, job: status.fleetJob?.id ?? null, goal: status.goal })
  } else {
    const done = request.action === 'pause' ? 'paused' : 'resumed'
    cli.print(`${done} session ${request.session}${status.fleetJob ? `: ${by}` : ` ${by}`}${goal ? ` (${goal})` : ''}`)
  }
  return ExitCode.OK
}

export default defineCommand<PauseOptions>({
  name: 'pause',
  description: 'pause the goal of a session another process runs (on this machine, or with --database a fleet worker)',
  configure: (command) =>
    command
      .argument('<id>', 'the session (its whole id, as `goalkeeper sessions` or the goal\'s own output shows it)')
      .option('--database <url>', 'also reach a fleet worker that runs the goal, through this PostgreSQL database')
      .addHelpText('after', `
The process that holds the session (a goal, chat or acp with the control plugin, which the default
cordis.yml loads) pauses the goal through its goal service after the running round, and records
control/applied with source cli; its command then ends as for a paused goal (goal exits 3). A fleet
goal's worker ends the job as paused (\`queue\` shows it paused); \`resume --database URL ID\` puts it
back in the queue.

Exit codes: 0 paused, 8 refused by the goal (its reason), 9 no process holds the session (none on this
machine; with --database, no worker runs it), 10 the process or worker that held it is gone, 64 bad
command line.`),
  async run(cli, [id], options) {
    return sendCliControl(cli, { session: String(id), source: 'cli', action: 'pause' }, options.database)
  },
})
