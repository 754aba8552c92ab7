import type { Context } from 'cordis'
import Schema from 'schemastery'
import type {} from '@goalkeeper/goal-budget'
import { GoalJudge, type JudgeConfig } from './judge.ts'
import { AGENT_JUDGE_NOTE } from './prompt.ts'

export { GoalJudge, refusal, type JudgeConfig } from './judge.ts'
export { parseVerdict, VERDICT_SCHEMA, type Verdict } from './verdict.ts'
export { AGENT_JUDGE_NOTE, JUDGE_SYSTEM_PROMPT } from './prompt.ts'
export { renderEvidence, type Evidence } from './evidence.ts'
export { snapshotBase, workspaceDiff, type WorkspaceDiff } from './diff.ts'

export const name = 'goal-judge'
export const inject = ['goals', 'models']

export const Config: Schema<JudgeConfig> = Schema.object({
  model: Schema.string().description('The model provider entry that judges (a cheap one, say); the goal\'s own model in a fresh context when unset.'),
  maxRejections: Schema.natural().min(1).default(3)
    .description('Rejections in a row after which the goal blocks `judge-rejected` with the last reasons.'),
  cannotTell: Schema.union(['reject', 'accept']).default('reject')
    .description('Whether a "cannot-tell" verdict rejects the completion (the default) or lets it stand.'),
  attempts: Schema.natural().min(1).max(5).default(2)
    .description('Judge calls per completion when the judge errs, times out or answers off the schema; then the goal blocks `judge-failed`.'),
  timeoutMs: Schema.natural().min(1).default(120_000).description('Timeout of one judge call.'),
  maxEvidenceChars: Schema.natural().min(2000).default(24_000).description('Size of the evidence the judge reads; the patch is cut to fit.'),
  maxTokens: Schema.natural().min(64).default(2000).description('Output token limit of a judge call.'),
})

export const apply = (ctx: Context, config: JudgeConfig) => {
  const judge = new GoalJudge(ctx, config)
  ctx.effect(function* () {
    yield ctx.on('goal/changed', (agent, change) => {
      if (change.op === 'create' && change.goal) judge.remember(change.goal.id, agent.session.header.cwd)
      if (change.op === 'clear' && change.previous) judge.forget(change.previous.id)
    })
    yield ctx.on('agent/system-prompt', (agent, parts) => {
      if (ctx.goals.get(agent)) parts.push(AGENT_JUDGE_NOTE)
    })
    yield ctx.provide('goalJudge', judge)
  }, 'goal-judge')
}
