import { InvalidArgumentError } from 'commander'
import { defineCommand } from '../command.ts'
import { describeError, HostError } from '../errors.ts'
import { ExitCode } from '../exit-codes.ts'
import { cliCommand } from './support/hints.ts'
import { goalSummary } from './support/goal-text.ts'
import { EXIT_CODE_HELP } from './support/outcome.ts'
import { joinWords, reportResult } from './support/report.ts'
import { AgentWork, asHostError } from './support/work.ts'

function parseRounds(value: string): number {
  const rounds = Number(value)
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(rounds) || rounds < 1) throw new InvalidArgumentError('expected a positive whole number.')
  return rounds
}

export default defineCommand({
  name: 'goal',
  description: 'pursue a goal in automatic rounds until it is complete, blocked, paused or out of rounds',
  configure: (command) =>
    command
      .argument('[objective...]', 'what must be true when the goal is done (several words are joined with spaces)')
      .option('--max-rounds <n>', 'cap on automatic rounds (default: the goal plugin\'s defaultMaxGoalRounds, 256 unless cordis.yml sets it)', parseRounds)
      .option('--session <id>', 'work in a saved session; without an objective, resume the goal saved there')
      .addHelpText('after', `
Progress (session id, round counter, tool calls, goal changes) goes to stderr; the final answer and the
goal summary go to stdout. Ctrl-C pauses the goal (the running round is cancelled); continue with
\`goalkeeper goal --session <id>\`, which resumes the goal (with --max-rounds N: after raising its cap).
${EXIT_CODE_HELP}`),
  async run(cli, [words], options) {
    const objective = joinWords(words)
    const maxRounds: number | undefined = options.maxRounds
    if (!objective && !options.session) {
      throw new HostError('the objective is missing', {
        hint: `${cliCommand(cli.globals, 'goal')} "<objective>" (or --session <id> to resume a saved goal)`,
      })
    }
    const work = await AgentWork.open(cli, { session: options.session, purpose: 'goal', goals: true })
    const early = objective ? createGoal(work, objective, maxRounds) : resumeGoal(work, maxRounds)
    if (early !== undefined) return early
    // Unanswered human input restored from the session goes first, as human input always does.
    work.agent.wake()
    return reportResult(work, await work.untilRest(), { goal: true })
  },
})

function createGoal(work: AgentWork, objective: string, maxGoalRounds: number | undefined): number | undefined {
  try {
    work.goals!.create(work.agent, maxGoalRounds === undefined ? { objective } : { objective, maxGoalRounds })
  } catch (error) {
    if ((error as { code?: string }).code === 'GOAL_ALREADY_EXISTS') {
      throw new HostError(`session ${work.agent.id} already has a goal that is not complete`, {
        hint: `resume it with \`${cliCommand(work.cli.globals, 'goal', '--session', work.agent.id)}\`, or clear it with /goal clear in \`${cliCommand(work.cli.globals, 'chat', '--session', work.agent.id)}\``,
      })
    }
    throw asHostError(error)
  }
  return undefined
}

/** `goal --session ID` without an objective: re-arm the saved goal (raising its cap first with --max-rounds). */
function resumeGoal(work: AgentWork, maxGoalRounds: number | undefined): number | undefined {
  const goals = work.goals!
  const goal = work.goal()
  if (!goal) {
    throw new HostError(`session ${work.agent.id} has no goal to resume`, {
      hint: `give an objective: ${cliCommand(work.cli.globals, 'goal', '--session', work.agent.id, '<objective>')}`,
    })
  }
  if (goal.phase === 'complete' && maxGoalRounds === undefined) {
    work.term.note('the goal is already complete; nothing to resume')
    work.term.out(goalSummary(goal))
    return work.finish(ExitCode.OK)
  }
  try {
    let ref = { id: goal.id, revision: goal.revision }
    if (maxGoalRounds !== undefined && maxGoalRounds !== goal.maxGoalRounds) ref.revision = goals.edit(work.agent, ref, { maxGoalRounds }).revision
    goals.resume(work.agent, ref)
  } catch (error) {
    const code = (error as { code?: string }).code
    if (code !== 'GOAL_ROUND_LIMIT' && code !== 'GOAL_INVALID_TRANSITION') throw asHostError(error)
    work.term.note(`cannot resume the goal: ${describeError(error)}`)
    const current = work.goal()
    work.term.out(goalSummary(current))
    if (code === 'GOAL_ROUND_LIMIT') {
      work.hint('to give it more rounds', 'goal', '--session', work.agent.id, '--max-rounds', String((current ?? goal).maxGoalRounds + 5))
      return work.finish(ExitCode.ROUND_LIMIT)
    }
    return work.finish(ExitCode.USAGE)
  }
  return undefined
}
