import type { GoalState } from '@goalkeeper/goal'

/** The system prompt section that explains the goal tools (added on `agent/system-prompt`). */
export function goalToolsPrompt(blockedThreshold: number): string {
  const blockRule = blockedThreshold > 0
    ? `In a goal round, block is refused until ${blockedThreshold} rounds have started: before that, keep trying other approaches.`
    : 'In a goal round, block is allowed from the first round.'
  return [
    '# Goal',
    'This session can have one goal: an objective that is worked on in automatic rounds until it is complete, blocked, paused or out of rounds. Messages that start with <goal_round> are such rounds, not the user speaking.',
    'Goal tools:',
    '- get_goal: read the goal (goal_id, revision, phase, rounds used and cap, blocker). update_goal needs its goal_id and revision; if a revision is refused as stale, read the goal again.',
    '- create_goal, and update_goal with action edit, pause or resume: only when the user asks for it in the current turn.',
    '- update_goal action complete: only when the objective is achieved and you verified it with evidence from the workspace (files, command output, passing tests).',
    `- update_goal action block with reason { code, message }: only when the goal cannot progress without outside help (missing access, a decision only the user can make). ${blockRule}`,
    'complete and block are accepted in a user turn or in the current goal round. If work remains, leave the goal active and keep working.',
    'A goal may have budgets (tokens, cost, time in rounds; get_goal shows them and what was spent). When one is used up the goal is blocked and you get one instruction to stop and summarise.',
  ].join('\n')
}

/** Added while the goal has a check: what runs on complete, so the model runs it first itself. */
export function checkPrompt(commands: readonly string[]): string {
  const list = commands.map((command) => `\`${command}\``).join(', then ')
  return `The current goal has a check: when update_goal complete is called, ${list} runs in the workspace, and the completion stands only if ${commands.length === 1 ? 'it passes' : 'every command passes'} (exit code 0). Run it yourself before completing.`
}

/** The one message added after the model itself completes or blocks the goal in a goal round. */
export function wrapUpMessage(goal: GoalState): string {
  const settled = goal.phase === 'blocked' && goal.blockedReason
    // Only the model's own block gets here, and its code is always model-reported: the message says it all.
    ? `The goal is now blocked (${goal.blockedReason.message}).`
    : 'The goal is now complete.'
  return `${settled} Stop calling tools. Reply with a short summary of the evidence: what was done, how it was verified, and anything left open.`
}

/** The reason a tool call after the wrap-up step is refused; the turn ends with it. */
export function wrapUpRefusal(phase: string): string {
  return `the goal is ${phase} and this turn had its wrap-up step; tool calls after it are refused and the turn ends here.`
}
