import type { Context } from 'cordis'
import Schema from 'schemastery'
import type { Agent } from '@goalkeeper/agent-loop'
import type { GoalChange } from '@goalkeeper/goal'
import type { UserMessage } from '@goalkeeper/session'
import { AutoResumer, type AutoResumeConfig } from './resumer.ts'

export * from './types.ts'
export type { AutoResumeConfig } from './resumer.ts'

export const name = 'goal-auto-resume'
export const inject = ['goals', 'agents']

const HOUR = 3_600_000
const MAX_TIMER_MS = 2_147_483_647

export const Config: Schema<AutoResumeConfig> = Schema.object({
  enabled: Schema.boolean().default(false).description('Resume every agent\'s goal after a usage limit (off: only agents opted in, e.g. `goal --auto-resume`).'),
  defaultWaitMs: Schema.natural().default(15 * 60_000).description('Wait when the provider announced no reset time.'),
  marginMs: Schema.natural().default(30_000).description('Added to every wait, so the retry lands after the reset.'),
  maxTries: Schema.natural().default(2).description('Automatic resumes per goal, at most.'),
  // A timer cannot wait longer than 2^31 - 1 ms (about 24.8 days): a longer one would fire at once.
  maxWaitMs: Schema.natural().min(1).max(MAX_TIMER_MS).default(26 * HOUR).description('A reset further away than this is not waited for (at most 24 days).'),
})

export const apply = (ctx: Context, config: AutoResumeConfig) => {
  const resumer = new AutoResumer(ctx, config)
  ctx.effect(function* () {
    yield ctx.on('goal/changed', (agent: Agent, change: GoalChange) => resumer.onGoalChanged(agent, change))
    yield ctx.on('agent/queued', (agent: Agent, message: UserMessage) => resumer.onQueued(agent, message))
    yield ctx.on('agent/disposed', (agent: Agent) => resumer.forget(agent))
    yield ctx.provide('goalAutoResume', resumer)
    yield () => resumer.dispose()
  }, 'goal-auto-resume')
}
