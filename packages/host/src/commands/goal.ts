import { defineCommand } from '../command.ts'
import { promptFrom } from './run/prompt-input.ts'
import { describeError } from '@goalkeeper/kit'
import type { GoalBudgets } from '@goalkeeper/goal'
import { asHostError, HostError } from '../errors.ts'
import { ExitCode } from '../exit-codes.ts'
import { goalSummary } from './render/goal-text.ts'
import { cliCommand } from './render/hints.ts'
import { EXIT_CODE_HELP } from './render/outcome.ts'
import { budgetHint, reportResult } from './render/result.ts'
import { AgentRun } from './run/agent-run.ts'
import { budgetsOf, parseRounds, parseTime, parseTokens, parseUsd, withMaxSteps, type BudgetOptions, type MaxStepsOptions } from './run/goal-options.ts'
import { collectUrl, notifyFor } from './run/notify-option.ts'
import { prepareLastMessage, withOutputLastMessage, type LastMessageOptions } from './run/last-message.ts'
import { loadOutputSchema, withOutputSchema, type OutputSchemaOptions } from './run/output-schema.ts'

export interface GoalOptions extends MaxStepsOptions, BudgetOptions, LastMessageOptions, OutputSchemaOptions {
  maxRounds?: number
  verify?: string[]
  until?: string
  autoResume?: boolean
  session?: string
  last?: boolean
  continue?: boolean
  notify?: string[]
}

export default defineCommand<GoalOptions>({
  name: 'goal',
  description: 'pursue a goal in automatic rounds until it is complete, blocked, paused or out of rounds',
  configure: (command) =>
    withOutputSchema(withOutputLastMessage(withMaxSteps(command)))
      .argument('[objective...]', 'what must be true when the goal is done (several words are joined with spaces; `-` reads it from stdin)')
      .option('--max-rounds <n>', 'cap on automatic rounds (default: the goal plugin\'s defaultMaxGoalRounds, 256 unless cordis.yml sets it)', parseRounds)
      .option('--token-budget <n>', 'stop the goal once its rounds used this many tokens (input - cached input + output)', parseTokens)
      .option('--cost-budget <usd>', 'stop the goal once its rounds cost this many US dollars (e.g. 2.50)', parseUsd)
      .option('--time-budget <duration>', 'stop the goal once its rounds ran this long (e.g. 30m, 1h30m)', parseTime)
      .option('--verify <command>', 'a check: the completion stands only if this shell command passes in the workspace (repeatable)', (value: string, list: string[] = []) => [...list, value])
      .option('--until <condition>', 'a condition goal: after every round the judge (goal-judge plugin) checks the condition, and the goal completes when it is met and every check passes (the objective defaults to the condition)')
      .option('--notify <url>', 'POST a signed webhook to this URL when the goal completes, blocks, pauses or waits for an approval (repeatable; signed with GOALKEEPER_WEBHOOK_SECRET)', collectUrl)
      .option('--auto-resume', 'after a usage limit, wait for the reset and resume the goal (at most the goal-auto-resume plugin\'s maxTries)')
      .option('--session <id>', 'work in a saved session; without an objective, resume the goal saved there')
      .option('--last', 'work in the most recent session of this project (as --session)')
      .option('--continue', 'the same as --last')
      .addHelpText('after', `
Progress (session id, round counter, tool calls, goal changes) goes to stderr; the final answer and the
goal summary go to stdout. Ctrl-C pauses the goal (the running round is cancelled); continue with
\`goalkeeper goal --session <id>\`, which resumes the goal (with --max-rounds N or a budget option: after
raising its cap or that budget). Budgets are counted over the goal's rounds by the goal-budget plugin.
${EXIT_CODE_HELP}`),
  async run(cli, [words], options) {
    const until: string | undefined = options.until
    const objective = (await promptFrom(cli, words, 'goal')) || until
    const maxRounds: number | undefined = options.maxRounds
    if ((options.last || options.continue) && options.session) throw new HostError('--last and --session both name a session', { hint: 'give one of them' })
    if (!objective && !options.session && !options.last && !options.continue) {
      throw new HostError('the objective is missing', {
        hint: `${cliCommand(cli.globals, 'goal')} "<objective>" (or --session <id> to resume a saved goal)`,
      })
    }
    const budgets = budgetsOf(options)
    const verify: string[] | undefined = options.verify
    const run = await AgentRun.open(cli, { session: options.session, last: !!(options.last || options.continue), purpose: 'goal', goals: true, maxSteps: options.maxSteps, answerSchema: await loadOutputSchema(cli.globals.cwd, options.outputSchema), lastMessageFile: prepareLastMessage(cli.globals.cwd, options.outputLastMessage) })
    let early: number | undefined
    try {
      if (budgets && !run.app.ctx.get('goalBudget')) {
        // A budget nobody counts would look like a limit and be none.
        throw new HostError('budgets need the goal-budget plugin, which this composition does not load', {
          hint: "add `- id: goal-budget\n  name: '@goalkeeper/goal-budget'` to cordis.yml after tool-goal",
        })
      }
      // A resumed goal keeps its cost budget: the model this run uses must be priced too (unless nothing will run).
      const saved = objective ? undefined : run.goal()
      refuseUnpricedCost(run, budgets?.costUsd ?? (saved?.phase === 'complete' ? undefined : saved?.budgets?.costUsd))
      if (until !== undefined && !run.app.ctx.get('goalJudge')) {
        // A condition nobody judges would never complete the goal by itself.
        throw new HostError('--until needs the goal-judge plugin, which this composition does not load', {
          hint: "add `- id: goal-judge\n  name: '@goalkeeper/goal-judge'` to cordis.yml after tool-goal",
        })
      }
      if (until !== undefined && !objective) throw new HostError('--until starts a new goal; it cannot be added to a saved one', { hint: 'give the condition when creating the goal' })
      if (options.notify) notifyFor(run, options.notify)
      if (options.autoResume) {
        const resumer = run.app.ctx.get('goalAutoResume')
        if (!resumer) throw new HostError('--auto-resume needs the goal-auto-resume plugin, which this composition does not load', { hint: "add `- id: goal-auto-resume\n  name: '@goalkeeper/goal-auto-resume'` to cordis.yml" })
        resumer.enable(run.agent)
      }
      early = objective ? createGoal(run, objective, maxRounds, budgets, verify, until) : resumeGoal(run, maxRounds, budgets, verify)
    } catch (error) {
      // A refused objective in a new session leaves no empty session behind.
      if (!run.resumed && run.agent.session.records.length === 1) await run.app.ctx.get('sessions')!.discard(run.agent.session).catch(() => {})
      throw error
    }
    if (early !== undefined) return early
    // Unanswered human input restored from the session goes first, as human input always does.
    run.agent.wake()
    return reportResult(run, await run.untilRest(), { goal: true })
  },
})

/** A cost budget nobody can price would let one paid round run, then stop the goal: refused before it starts. */
function refuseUnpricedCost(run: AgentRun, costUsd: number | undefined): void {
  if (costUsd === undefined) return
  const problem = run.app.ctx.get('goalBudget')?.costBudgetProblem(run.agent.model, costUsd)
  if (problem) throw new HostError(problem.message, { hint: `${problem.fix}\nor give the goal a token or time budget instead` })
}

function createGoal(run: AgentRun, objective: string, maxGoalRounds: number | undefined, budgets: GoalBudgets | undefined, verify: string[] | undefined, until: string | undefined): number | undefined {
  try {
    run.goals!.create(run.agent, { objective, ...(maxGoalRounds === undefined ? {} : { maxGoalRounds }), ...(budgets ? { budgets } : {}), ...(verify ? { verify } : {}), ...(until === undefined ? {} : { until }) })
  } catch (error) {
    if ((error as { code?: string }).code === 'GOAL_ALREADY_EXISTS') {
      throw new HostError(`session ${run.agent.id} already has a goal that is not complete`, {
        hint: `resume it with \`${cliCommand(run.cli.globals, 'goal', '--session', run.agent.id)}\`, or clear it with /goal clear in \`${cliCommand(run.cli.globals, 'chat', '--session', run.agent.id)}\``,
      })
    }
    throw asHostError(error)
  }
  return undefined
}

/** `goal --session ID` without an objective: re-arm the saved goal (raising its cap or budgets first when given). */
function resumeGoal(run: AgentRun, maxGoalRounds: number | undefined, budgets: GoalBudgets | undefined, verify: string[] | undefined): number | undefined {
  const goals = run.goals!
  const goal = run.goal()
  if (!goal) {
    throw new HostError(`session ${run.agent.id} has no goal to resume`, {
      hint: `give an objective: ${cliCommand(run.cli.globals, 'goal', '--session', run.agent.id, '<objective>')}`,
    })
  }
  if (goal.phase === 'complete' && maxGoalRounds === undefined && !budgets && !verify) {
    run.term.note('the goal is already complete; nothing to resume')
    run.term.out(goalSummary(goal), 'wrap')
    return run.finish(ExitCode.OK)
  }
  try {
    let ref = { id: goal.id, revision: goal.revision }
    const changes = {
      ...(maxGoalRounds !== undefined && maxGoalRounds !== goal.maxGoalRounds ? { maxGoalRounds } : {}),
      ...(budgets ? { budgets } : {}),
      ...(verify ? { verify } : {}),
    }
    if (Object.keys(changes).length) ref.revision = goals.edit(run.agent, ref, changes).revision
    goals.resume(run.agent, ref)
  } catch (error) {
    const code = (error as { code?: string }).code
    if (code !== 'GOAL_ROUND_LIMIT' && code !== 'GOAL_BUDGET_LIMIT' && code !== 'GOAL_INVALID_TRANSITION') throw asHostError(error)
    run.term.note(`cannot resume the goal: ${describeError(error)}`)
    const current = run.goal()
    run.term.out(goalSummary(current), 'wrap')
    if (code === 'GOAL_ROUND_LIMIT') {
      run.hint('to give it more rounds', 'goal', '--session', run.agent.id, '--max-rounds', String((current ?? goal).maxGoalRounds + 5))
      return run.finish(ExitCode.ROUND_LIMIT)
    }
    if (code === 'GOAL_BUDGET_LIMIT') {
      budgetHint(run, current ?? goal)
      return run.finish(ExitCode.BUDGET_LIMIT)
    }
    return run.finish(ExitCode.USAGE)
  }
  return undefined
}
