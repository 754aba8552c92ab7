import type { Goal } from '@goalkeeper/goal'

/**
 * The text of a goal round's prompt (DESIGN.md section 9.8). Deterministic: the same goal and round
 * always give the same text, so an admitted message can be checked against it. The objective is
 * JSON-quoted so multi-line or tag-like text stays data and cannot close the `<goal_round>` block.
 */
export function renderGoalRoundPrompt(goal: Pick<Goal, 'objective' | 'maxGoalRounds'> & Pick<Partial<Goal>, 'judgement' | 'until'>, round: number): string {
  const lines = [
    '<goal_round>',
    `Objective: ${JSON.stringify(goal.objective)}`,
    ...(goal.until ? [`Done when: ${JSON.stringify(goal.until)} (after every round a judge checks this condition; the goal completes when it is met)`] : []),
    `Round: ${round}/${goal.maxGoalRounds}`,
    '',
    'This is an automatic round of work on the goal above, in the same session.',
    '- The workspace and the results of your tools are the truth. Check them instead of relying on memory or on what earlier messages claim.',
    '- Make concrete progress on the objective in this round, and verify it (read back what you changed, run the relevant checks).',
    '- Before you mark the goal complete (update_goal with action "complete"), gather evidence from the workspace that the objective is fully met.',
    '- If work remains, leave the goal active and end the round with a short summary of what you did and what is left; the next round continues from there.',
    ...rejection(goal.judgement),
    '</goal_round>',
  ]
  return lines.join('\n')
}

/**
 * The judge's last refusal, so the round starts from what is missing instead of claiming completion again.
 * Its texts are JSON-quoted like the objective: they came from a model and must stay data.
 */
function rejection(judgement: Goal['judgement']): string[] {
  if (!judgement || judgement.rejectionsInARow === 0) return []
  const { last } = judgement
  return [
    '',
    `The last completion was not accepted by the judge (${last.verdict}, ${judgement.rejectionsInARow} in a row). Its reasons:`,
    ...last.reasons.map((reason) => `- ${JSON.stringify(reason)}`),
    ...(last.missing.length ? ['What it found missing:', ...last.missing.map((item) => `- ${JSON.stringify(item)}`)] : []),
  ]
}
