import type { Context } from 'cordis'
import Schema from 'schemastery'
import { checkPrompt, goalToolsPrompt } from './prompt.ts'
import { goalTools, type ToolGoalConfig } from './tools.ts'
import { reviewCondition } from './condition.ts'
import { holdToWrapUp } from './wrap-up.ts'

export { parseGoalCommand, GOAL_COMMAND_USAGE, type GoalCommand, type ParsedGoalCommand } from './command.ts'
export { executeGoalCommand, type GoalCommandResult } from './execute-command.ts'
export { formatGoalStatus } from './status.ts'
export { authorityOf, type Authority, type UpdateAction } from './authority.ts'
export type { ToolGoalConfig } from './tools.ts'
export { WRAP_UP_BY } from './wrap-up.ts'

export const name = 'tool-goal'
export const inject = ['tools', 'goals']

export const Config = Schema.object({
  blockedThreshold: Schema.natural().default(3)
    .description('Rounds that must have started before the model may block the goal from inside a goal round.'),
  checkTimeoutMs: Schema.natural().min(1).default(300_000)
    .description('Timeout of each check command run on update_goal complete (capped by workspace-tools maxCommandTimeoutMs).'),
})

export const apply = (ctx: Context, config: ToolGoalConfig) => {
  const prompt = goalToolsPrompt(config.blockedThreshold)
  // Read once (`goals` is injected): a `ctx.goals` read goes through Cordis's context proxy, and the prompt
  // listener runs before every model call.
  const goals = ctx.goals
  ctx.effect(function* () {
    for (const tool of goalTools(ctx, config, (...args) => holdToWrapUp(ctx, ...args))) yield ctx.tools.register(tool)
    yield ctx.on('agent/system-prompt', (agent, parts) => {
      parts.push(prompt)
      const check = goals.get(agent)?.verify
      if (check?.length) parts.push(checkPrompt(check))
    })
    yield ctx.on('goal/round-ended', (agent, ended) => reviewCondition(ctx, config, agent, ended))
  }, 'tool-goal')
}
