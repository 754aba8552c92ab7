/** The human `/goal` command, parsed; hosts run it with `executeGoalCommand`. */
export type GoalCommand =
  | { kind: 'show' }
  | { kind: 'create'; objective: string; maxGoalRounds?: number }
  | { kind: 'edit'; objective?: string; maxGoalRounds?: number }
  | { kind: 'pause' }
  | { kind: 'resume' }
  | { kind: 'clear' }

export type ParsedGoalCommand = GoalCommand | { kind: 'invalid'; message: string }

const COMMAND = /^\/goal(?=\s|$)/i
const CONTROL_WORDS = ['pause', 'resume', 'clear'] as const
const EDIT = /^edit(?:\s+|$)/i
const MAX_ROUNDS = /^--max-rounds(?:=|\s+|$)(\S*)(?:\s+([\s\S]*))?$/i

export const GOAL_COMMAND_USAGE = [
  '/goal                      show the goal',
  '/goal <objective>          set a new goal',
  '/goal edit <objective>     change the objective',
  '/goal edit --max-rounds N  change the round cap (an objective may follow)',
  '/goal pause | resume | clear',
].join('\n')

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
  const edit = EDIT.exec(rest)
  if (edit) {
    const parsed = withMaxRounds(rest.slice(edit[0].length))
    if ('message' in parsed) return { kind: 'invalid', message: parsed.message }
    if (parsed.objective === undefined && parsed.maxGoalRounds === undefined) {
      return { kind: 'invalid', message: `Say what to change: /goal edit <objective> or /goal edit --max-rounds N.\n${GOAL_COMMAND_USAGE}` }
    }
    return { kind: 'edit', ...parsed }
  }
  const parsed = withMaxRounds(rest)
  if ('message' in parsed) return { kind: 'invalid', message: parsed.message }
  if (parsed.objective === undefined) return { kind: 'invalid', message: `Give the objective after the options: /goal --max-rounds N <objective>.` }
  return { kind: 'create', objective: parsed.objective, ...(parsed.maxGoalRounds === undefined ? {} : { maxGoalRounds: parsed.maxGoalRounds }) }
}

function withMaxRounds(text: string): { objective?: string; maxGoalRounds?: number } | { message: string } {
  const trimmed = text.trim()
  const match = MAX_ROUNDS.exec(trimmed)
  if (!match) return trimmed ? { objective: trimmed } : {}
  const [, value, objective] = match
  const maxGoalRounds = Number(value)
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(maxGoalRounds) || maxGoalRounds < 1) {
    return { message: `--max-rounds needs a positive whole number, got ${JSON.stringify(value)}.` }
  }
  const rest = objective?.trim()
  return rest ? { objective: rest, maxGoalRounds } : { maxGoalRounds }
}
