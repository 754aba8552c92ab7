import { defineCommand } from '../../command.ts'
import { ExitCode } from '../../exit-codes.ts'
import { promptFrom } from '../run/prompt-input.ts'
import { budgetsOf, parseRounds, parseTime, parseTokens, parseUsd, type BudgetOptions } from '../run/goal-options.ts'
import { COMMAND_KEY, compositionKey } from '../lookup/fleet-key.ts'
import { databaseOf, fleetHostError, openFleet } from './fleet-app.ts'

export interface SubmitOptions extends BudgetOptions {
  repo: string
  ref: string
  maxRounds?: number
  verify?: string[]
  until?: string
  database?: string
}

export default defineCommand<SubmitOptions>({
  name: 'submit',
  description: 'queue a goal for the workers: a repository, a ref and an objective; prints the job id',
  configure: (command) =>
    command
      .argument('[objective...]', 'what must be true when the goal is done (`-` reads it from stdin)')
      .requiredOption('--repo <url>', 'the git repository the goal works in (URL, file:// URL or local path)')
      .option('--ref <ref>', 'the branch, tag or commit to start from', 'main')
      .option('--max-rounds <n>', 'cap on automatic rounds', parseRounds)
      .option('--token-budget <n>', 'stop the goal once its rounds used this many tokens', parseTokens)
      .option('--cost-budget <usd>', 'stop the goal once its rounds cost this many US dollars', parseUsd)
      .option('--time-budget <duration>', 'stop the goal once its rounds ran this long (e.g. 30m)', parseTime)
      .option('--verify <command>', 'a check the completion must pass in the workspace (repeatable)', (value: string, list: string[] = []) => [...list, value])
      .option('--until <condition>', 'a condition goal: after every round the judge (goal-judge plugin of the worker\'s composition) checks the condition, and the goal completes when it is met and every check passes (the objective defaults to the condition)')
      .option('--database <url>', 'PostgreSQL URL of the queue (default: GOALKEEPER_DATABASE_URL, else DATABASE_URL)')
      .addHelpText('after', `
The job's session id is chosen now; any worker that runs the goal works in that session, and its
workspace changes go to the branch goalkeeper/<session id> of the repository (see \`goalkeeper worker\`).
With --until, the worker's composition must load the goal-judge plugin; a worker without it fails the job.`),
  async run(cli, [words], options) {
    const objective = (await promptFrom(cli, words, 'submit')) || options.until
    const { app, fleet } = await openFleet(cli)
    const key = await compositionKey(app, 'submit')
    let queue: ReturnType<typeof fleet.queue> | undefined
    try {
      queue = fleet.queue(databaseOf(options))
      // Imported here: the command modules load for --help, which must not load the fleet (pg-boss).
      const { assertFleetKey } = await import('@goalkeeper/fleet')
      assertFleetKey(COMMAND_KEY, key, key && (await queue.knownKey()), 'nothing submitted')
      const budgets = budgetsOf(options)
      const { id, job } = await queue.submit({
        objective: objective ?? '',
        repo: options.repo,
        ref: options.ref,
        ...(options.maxRounds !== undefined ? { maxRounds: options.maxRounds } : {}),
        ...(budgets ? { budgets } : {}),
        ...(options.verify ? { verify: options.verify } : {}),
        ...(options.until === undefined ? {} : { until: options.until }),
      })
      if (cli.globals.json) cli.printJson({ type: 'submitted', id, session: job.sessionId, objective: job.objective, ...(job.until === undefined ? {} : { until: job.until }), repo: job.repo, ref: job.ref })
      else {
        cli.note(`queued goal ${id} (session ${job.sessionId}) for ${job.repo} ${job.ref}`)
        cli.print(id)
      }
      return ExitCode.OK
    } catch (error) {
      throw fleetHostError(error)
    } finally {
      await queue?.stop()
    }
  },
})
