import { defineCommand } from '../../command.ts'
import { ExitCode } from '../../exit-codes.ts'
import { oneLine } from '../render/text.ts'
import { COMMAND_KEY, compositionKey } from '../lookup/fleet-key.ts'
import { databaseOf, fleetHostError, openFleet } from './fleet-app.ts'

export interface QueueOptions {
  database?: string
  state?: string
}

export default defineCommand<QueueOptions>({
  name: 'queue',
  description: 'list the goals of the queue: queued, running, done and failed (id, state, worker, rounds, session, objective)',
  configure: (command) =>
    command
      .option('--database <url>', 'PostgreSQL URL of the queue (default: GOALKEEPER_DATABASE_URL, else DATABASE_URL)')
      .option('--state <state>', 'only goals in this state: queued, running, paused, done, failed or cancelled'),
  async run(cli, _args, options) {
    const { app, fleet } = await openFleet(cli)
    const key = await compositionKey(app, 'queue')
    let queue: ReturnType<typeof fleet.queue> | undefined
    try {
      queue = fleet.queue(databaseOf(options))
      // Imported here: the command modules load for --help, which must not load the fleet (pg-boss).
      const { assertFleetKey } = await import('@goalkeeper/fleet')
      assertFleetKey(COMMAND_KEY, key, key && (await queue.knownKey()), 'nothing listed')
      let goals = await queue.list()
      if (options.state) goals = goals.filter((goal) => goal.state === options.state)
      if (cli.globals.json) {
        // `job`, not `goal`: a goal line of the agent commands is a goal change, with another shape.
        for (const goal of goals) cli.printJson({ type: 'job', ...goal })
        return ExitCode.OK
      }
      if (!goals.length) {
        cli.note(options.state ? `no ${options.state} goals` : 'the queue is empty')
        return ExitCode.OK
      }
      const rows = goals.map((goal) => [
        goal.id, goal.state, goal.worker ? `${goal.worker}${goal.workerLost ? ' (lost)' : ''}` : '-', goal.rounds === null ? '-' : String(goal.rounds), goal.phase ?? '-', goal.sessionId,
        oneLine(goal.state === 'failed' ? `${goal.objective} (${reasonOf(goal.output)})` : goal.objective, 60),
      ])
      const header = ['ID', 'STATE', 'WORKER', 'ROUNDS', 'PHASE', 'SESSION', 'OBJECTIVE']
      const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)))
      const line = (cells: string[]) => cells.map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  ')
      cli.print([line(header), ...rows.map(line)].join('\n'))
      return ExitCode.OK
    } catch (error) {
      throw fleetHostError(error)
    } finally {
      await queue?.stop()
    }
  },
})

function reasonOf(output: unknown): string {
  const message = (output as { message?: unknown } | null)?.message
  return typeof message === 'string' ? message : 'failed'
}
