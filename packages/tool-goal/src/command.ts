import { parseDuration } from '@goalkeeper/kit'
import type { GoalBudgets } from '@goalkeeper/goal'

/** The human `/goal` command, parsed; hosts run it with `executeGoalCommand`. */
export type GoalCommand =
  | { kind: 'show' }
  /** `until`: a condition goal (`/goal until <condition>`), whose objective is the condition itself. */
  | { kind: 'create'; objective: string; maxGoalRounds?: number; budgets?: GoalBudgets; until?: string }
  | { kind: 'edit'; objective?: string; maxGoalRounds?: number; budgets?: GoalBudgets }
  /** Raise (or set) budgets; a goal blocked at its budget is resumed once none is used up. */
  | { kind: 'budget'; budgets: GoalBudgets }
  /** Set the check to one shell command; an empty list (`/goal verify off`) removes it. */
  | { kind: 'verify'; commands: string[] }
  | { kind: 'pause' }
  /** A person ends the goal: it stands without the checks or the judge, and is recorded as their decision. */
  | { kind: 'complete' }
  | { kind: 'resume' }
  | { kind: 'clear' }

export type ParsedGoalCommand = GoalCommand | { kind: 'invalid'; message: string }

const COMMAND = /^\/goal(?=\s|$)/i
const CONTROL_WORDS = ['pause', 'resume', 'complete', 'clear'] as const
const EDIT = /^edit(?:\s+|$)/i
/** `budget` is a command only when options follow, so `/goal budget the quarterly report` is an objective. */
const BUDGET = /^budget\s+(?=--)/i
const VERIFY = /^verify(?:\s+|$)/i
const UNTIL = /^until(?:\s+|$)/i
const OPTION = /^--([a-z-]+)(?:=|\s+|$)(\S*)(?:\s+|$)/i

export const GOAL_COMMAND_USAGE = [
  '/goal                      show the goal',
  '/goal <objective>          set a new goal',
  '/goal [options] <objective>  set it with --max-rounds N, --token-budget N, --cost-budget USD, --time-budget 30m',
  '/goal until <condition>    set a goal that completes when a judge finds the condition met after a round',
  '/goal edit <objective>     change the objective',
  '/goal edit --max-rounds N  change the round cap (an objective may follow)',
  '/goal budget --token-budget N | --cost-budget USD | --time-budget 30m   raise a budget (resumes a goal stopped by it)',
  '/goal verify <command>     check the goal with this command before a completion stands (/goal verify off removes it)',
  '/goal pause | resume | clear  stop the rounds, start them again, or remove the goal',
  '/goal complete               end the goal as done, by your decision (no check or judge is asked)',
].join('\n')

interface Options {
  objective?: string
  maxGoalRounds?: number
  budgets?: GoalBudgets
}

/**
 * Returns undefined when `input` is not a `/goal` command at all. A control word counts only as the
 * whole input after `/goal`, so `/goal pause the deploy after tests` sets that objective.
 */
export function parseGoalCommand(input: string): ParsedGoalCommand | undefined {
  if (typeof input !== 'string') return undefined
  const text = input.trimStart()
  const match = COMMAND.exec(text)
  if (!match) return undefined
  const rest = text.slice(match[0].length).trim()
  if (!rest) return { kind: 'show' }
  const word = CONTROL_WORDS.find((control) => control === rest.toLowerCase())
  if (word) return { kind: word }
  const budget = BUDGET.exec(rest)
  if (budget) {
    const parsed = withOptions(rest.slice(budget[0].length))
    if ('message' in parsed) return { kind: 'invalid', message: parsed.message }
    if (!parsed.budgets || parsed.objective !== undefined || parsed.maxGoalRounds !== undefined) {
      return { kind: 'invalid', message: `/goal budget takes budget options only: --token-budget N, --cost-budget USD, --time-budget 30m.` }
    }
    return { kind: 'budget', budgets: parsed.budgets }
  }
  const verify = VERIFY.exec(rest)
  if (verify) {
    const command = rest.slice(verify[0].length).trim()
    if (!command) return { kind: 'invalid', message: 'Give the command to check the goal with: /goal verify npm test (or /goal verify off).' }
    return { kind: 'verify', commands: command.toLowerCase() === 'off' ? [] : [command] }
  }
  const until = UNTIL.exec(rest)
  if (until) {
    const parsed = withOptions(rest.slice(until[0].length))
    if ('message' in parsed) return { kind: 'invalid', message: parsed.message }
    if (parsed.objective === undefined) return { kind: 'invalid', message: 'Give the condition that ends the goal: /goal until the tests in tests/ pass.' }
    return { kind: 'create', objective: parsed.objective, until: parsed.objective, ...(parsed.maxGoalRounds === undefined ? {} : { maxGoalRounds: parsed.maxGoalRounds }), ...(parsed.budgets ? { budgets: parsed.budgets } : {}) }
  }
  const edit = EDIT.exec(rest)
  if (edit) {
    const parsed = withOptions(rest.slice(edit[0].length))
    if ('message' in parsed) return { kind: 'invalid', message: parsed.message }
    if (parsed.objective === undefined && parsed.maxGoalRounds === undefined && parsed.budgets === undefined) {
      return { kind: 'invalid', message: `Say what to change: /goal edit <objective> or /goal edit --max-rounds N.\n${GOAL_COMMAND_USAGE}` }
    }
    return { kind: 'edit', ...parsed }
  }
  const parsed = withOptions(rest)
  if ('message' in parsed) return { kind: 'invalid', message: parsed.message }
  if (parsed.objective === undefined) return { kind: 'invalid', message: `Give the objective after the options: /goal --max-rounds N <objective>.` }
  return { kind: 'create', objective: parsed.objective, ...(parsed.maxGoalRounds === undefined ? {} : { maxGoalRounds: parsed.maxGoalRounds }), ...(parsed.budgets ? { budgets: parsed.budgets } : {}) }
}

/** Leading `--name value` options, then the objective (the rest, kept as written). */
function withOptions(text: string): Options | { message: string } {
  let rest = text.trim()
  const options: Options = {}
  const budgets: GoalBudgets = {}
  for (let match = OPTION.exec(rest); match; match = OPTION.exec(rest)) {
    const [whole, name, value] = match
    const read = readOption(name.toLowerCase(), value)
    if (typeof read === 'string') return { message: read }
    if (read.maxGoalRounds !== undefined) options.maxGoalRounds = read.maxGoalRounds
    Object.assign(budgets, read.budgets)
    rest = rest.slice(whole.length)
  }
  if (Object.keys(budgets).length) options.budgets = budgets
  if (rest.trim()) options.objective = rest.trim()
  return options
}

function readOption(name: string, value: string): Pick<Options, 'maxGoalRounds' | 'budgets'> | string {
  const whole = Number(value)
  const isWhole = /^\d+$/.test(value) && Number.isSafeInteger(whole) && whole >= 1
  switch (name) {
    case 'max-rounds':
      return isWhole ? { maxGoalRounds: whole } : `--max-rounds needs a positive whole number, got ${JSON.stringify(value)}.`
    case 'token-budget':
      return isWhole ? { budgets: { tokens: whole } } : `--token-budget needs a positive whole number of tokens, got ${JSON.stringify(value)}.`
    case 'cost-budget': {
      const usd = Number(value.replace(/^\$/, ''))
      return /^\$?\d+(\.\d+)?$/.test(value) && usd > 0 ? { budgets: { costUsd: usd } } : `--cost-budget needs a positive amount of US dollars like 2.50, got ${JSON.stringify(value)}.`
    }
    case 'time-budget': {
      const ms = parseDuration(value)
      return ms === undefined ? `--time-budget needs a duration with its unit like 30m or 1h30m, got ${JSON.stringify(value)}.` : { budgets: { activeTimeMs: ms } }
    }
    default:
      return `Unknown option --${name}. ${GOAL_COMMAND_USAGE.split('\n').find((line) => line.includes('[options]'))!.trim()}`
  }
}
