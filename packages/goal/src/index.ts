import type { Context } from 'cordis'
import Schema from 'schemastery'
import { dropIllegalRoundsOnSubmit, vetoIllegalRoundOnAdmit } from './admission.ts'
import { GoalRegistry, type GoalConfig } from './service.ts'

export * from './types.ts'
export { GoalError, isGoalError } from './errors.ts'
export { GoalFold, foldGoal, GOAL_CHANGE_RECORD } from './fold.ts'
export { goalSummaryFold, type GoalSummary } from './summary.ts'
export { roundViolation, isGoalSourced } from './rounds.ts'
export { MAX_OBJECTIVE_LENGTH, normalizeCondition } from './validate.ts'
export { BLOCK, BLOCK_CODES, blockCodesOf, BUDGET_BLOCK_CODE, isBlockCode, isLimitCode, MODEL_BLOCK_CODE, type BlockCode, type BlockCodeInfo, type BlockCodeOf } from './block-codes.ts'
export { isRunnable, isSettled } from './status.ts'
export { describeGoalStatus, describePhase, describeShortfall, describeVerification, describeSpend, describeTurnOutcome, formatTokens, formatUsd } from './status-text.ts'
export { tokensOf } from './tokens.ts'
export { roundStopText } from './round-stop.ts'
export { addJudgement, GOAL_JUDGEMENT_RECORD, JUDGE_VERDICTS, MAX_DIFF_SUMMARY, MAX_JUDGEMENT_ITEMS, MAX_JUDGEMENT_TEXT } from './judgements.ts'
export { addCheck, GOAL_CHECK_RECORD, MAX_CHECK_OUTPUT, normalizeVerify } from './checks.ts'
export { addUsage, budgetReached, budgetsReached, describeBudget, formatBudgetUsd, formatDuration, GOAL_USAGE_RECORD, normalizeBudgets, type BudgetName, type BudgetReached } from './budgets.ts'
export type { GoalConfig } from './service.ts'

export const name = 'goal'
export const inject = ['sessions', 'agents']

export const Config = Schema.object({
  defaultMaxGoalRounds: Schema.natural().min(1).max(Number.MAX_SAFE_INTEGER).default(256)
    .description('Round cap of a goal created without maxGoalRounds (a positive whole number).'),
  defaultVerify: Schema.array(Schema.string()).default([])
    .description('Check commands of a goal created without a check, e.g. ["npm test"]: this workspace\'s default.'),
})

export const apply = (ctx: Context, config: GoalConfig) => {
  const goals = new GoalRegistry(ctx, config)
  ctx.effect(function* () {
    yield ctx.on('session/event', (session) => goals.observe(session))
    yield ctx.sessions.provideCheckpoint(name, (session) => goals.checkpointPart(session))
    yield ctx.on('agent/session-start', (agent) => goals.forget(agent))
    yield ctx.on('agent/disposed', (agent) => goals.forget(agent))
    // Prepended: every listener that does not prepend runs inside this one and cannot re-add a dropped round.
    yield ctx.on('agent/prompt-submit', dropIllegalRoundsOnSubmit(ctx, goals), { prepend: true })
    yield ctx.on('agent/admit', vetoIllegalRoundOnAdmit(ctx, goals))
    yield ctx.provide('goals', goals)
  }, 'goal')
}
