// The options that shape a goal (round cap, budgets), shared by `goal` and `submit`, and the step cap of the agent commands.
import { InvalidArgumentError, type Command } from 'commander'
import { parseDuration } from '@goalkeeper/kit'
import type { GoalBudgets } from '@goalkeeper/goal'

/** `--max-steps` (see withMaxSteps). */
export interface MaxStepsOptions {
  maxSteps?: number
}

/** The budget options of `goal` and `submit`. */
export interface BudgetOptions {
  tokenBudget?: number
  costBudget?: number
  timeBudget?: number
}

export function parseRounds(value: string): number {
  const rounds = Number(value)
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(rounds) || rounds < 1) throw new InvalidArgumentError('expected a positive whole number.')
  return rounds
}

export function parseTokens(value: string): number {
  const tokens = Number(value)
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(tokens) || tokens < 1) throw new InvalidArgumentError('expected a positive whole number of tokens.')
  return tokens
}

export function parseUsd(value: string): number {
  const usd = Number(value.replace(/^\$/, ''))
  if (!/^\$?\d+(\.\d+)?$/.test(value) || !(usd > 0)) throw new InvalidArgumentError('expected a positive amount of US dollars, like 2.50.')
  return usd
}

export function parseTime(value: string): number {
  const ms = parseDuration(value)
  if (ms === undefined) throw new InvalidArgumentError('expected a duration with its unit, like 30m, 1h30m or 90s.')
  return ms
}

/** The budgets the options name, or undefined when none was given. */
export function budgetsOf(options: BudgetOptions): GoalBudgets | undefined {
  const budgets: GoalBudgets = {}
  if (options.tokenBudget !== undefined) budgets.tokens = options.tokenBudget
  if (options.costBudget !== undefined) budgets.costUsd = options.costBudget
  if (options.timeBudget !== undefined) budgets.activeTimeMs = options.timeBudget
  return Object.keys(budgets).length ? budgets : undefined
}


/** `--max-steps N` of `run`, `chat` and `goal`: the agent-loop's `maxSteps` for this run's agent. */
export function withMaxSteps(command: Command): Command {
  return command.option('--max-steps <n>', 'model calls allowed in one turn or goal round (default: maxSteps of the agent-loop entry in cordis.yml, 64 unless set)', parseRounds)
}
