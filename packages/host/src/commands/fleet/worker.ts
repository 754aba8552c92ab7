import { InvalidArgumentError } from 'commander'
import { defineCommand } from '../../command.ts'
import { ExitCode } from '../../exit-codes.ts'
import { compositionKey } from '../lookup/fleet-key.ts'
import { databaseOf, fleetHostError, goalRunner, openFleet } from './fleet-app.ts'

function parseConcurrency(value: string): number {
  const count = Number(value)
  if (!/^\d+$/.test(value) || count < 1 || count > 256) throw new InvalidArgumentError('expected a whole number from 1 to 256.')
  return count
}

export interface WorkerOptions {
  concurrency: number
  database?: string
  name?: string
}

export default defineCommand<WorkerOptions>({
  name: 'worker',
  description: 'run goals from the queue until stopped; Ctrl-C or SIGTERM drains (running goals pause and go back to the queue)',
  configure: (command) =>
    command
      .option('--concurrency <n>', 'goals run at once', parseConcurrency, 1)
      .option('--database <url>', 'PostgreSQL URL of the queue and, as GOALKEEPER_DATABASE_URL, of the goals\' session store (default: GOALKEEPER_DATABASE_URL, else DATABASE_URL)')
      .option('--name <name>', 'this worker\'s name in session records and listings (default: host:pid)')
      .addHelpText('after', `
Each goal runs in a fresh clone of its job's repository (the branch goalkeeper/<session id> when a
worker pushed one before), composed from that clone's cordis.yml, else from this command's composition.
Every round's changes are committed and pushed to that branch. A worker that takes a goal over reopens
its session, resets the clone and the branch to the last commit the session recorded (telling the model
what work was lost) and re-arms the goal (recorded as fleet/claim with its name). Workers beat in the
database; a live worker releases the goals of one silent for the fleet's lostSeconds. Exit code after a
drain: 0, or 3 when running goals were paused and returned to the queue.`),
  async run(cli, _args, options) {
    const database = databaseOf(options)
    // Loaded here, not with the command list: `--help` and the other commands never pay for the goal runtime.
    const { runGoal } = await import('@goalkeeper/fleet')
    const runner = goalRunner(cli, database)
    const { app, fleet } = await openFleet(cli, { signals: true })
    // The key this worker's goals sign with, checked against the fleet's before a job is taken.
    const key = await compositionKey(app, 'worker')
    let returned = 0
    let worker: ReturnType<typeof fleet.worker>
    try {
      worker = fleet.worker({
        concurrency: options.concurrency,
        name: options.name,
        key,
        log: (line) => cli.note(line),
        run: async (handle) => {
          const outcome = await runGoal(handle, runner)
          if (outcome.kind === 'returned') {
            returned++
            if (app.signals) app.signals.exitCode = ExitCode.PAUSED
          }
          return outcome
        },
      }, database)
    } catch (error) {
      throw fleetHostError(error)
    }
    try {
      await worker.start()
    } catch (error) {
      throw fleetHostError(error)
    }
    cli.note(`worker ${worker.name}: ${options.concurrency} at once, queue ${fleet.config.queue}`)
    // The worker runs until a signal's ordered shutdown drains it (the fleet plugin's teardown).
    await app.closed
    return returned ? ExitCode.PAUSED : ExitCode.OK
  },
})
