/** The `ctx.goals.edit` input with only the fields that were given (an absent field means "keep"). */
export function editInput(objective: string | undefined, maxGoalRounds: number | undefined): { objective?: string; maxGoalRounds?: number } {
  const input: { objective?: string; maxGoalRounds?: number } = {}
  if (objective !== undefined) input.objective = objective
  if (maxGoalRounds !== undefined) input.maxGoalRounds = maxGoalRounds
  return input
}
