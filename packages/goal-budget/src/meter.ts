import type { Context, Logger } from 'cordis'
import type { Agent, StepSummary } from '@goalkeeper/agent-loop'
import { BUDGET_BLOCK_CODE, budgetReached, tokensOf, type GoalChange, type UsageReport } from '@goalkeeper/goal'
import { describeError, untraced } from '@goalkeeper/kit'
import { isRecordOf, recordsOfTurn } from '@goalkeeper/session'
import { costOf, unpricedCostBudget, type ModelPrice } from './prices.ts'
import { wrapUpMessage } from './wrap-up.ts'

export interface BudgetConfig {
  prices: Record<string, ModelPrice>
}

interface AgentMeter {
  /** The turn being metered and when its last metered step ended (or the turn started). */
  turn: number
  mark: number
  /** The budget ran out in this turn and the wrap-up instruction was given. */
  wrappedUp: boolean
}

/**
 * Counts every model call of a goal round into the goal (`ctx.goals.recordUsage`) and stops the goal at its
 * budget. It acts in `agent/step-end`, which the loop awaits before the next model call, so no call starts
 * after a budget was seen used up, except the one wrap-up call that lets the model summarise.
 */
export class BudgetMeter {
  private readonly meters = new Map<string, AgentMeter>()
  private readonly logger: Logger

  /** Taken once: both are injected, and a `ctx.<service>` read costs tens of microseconds, several a step. */
  private readonly goals: Context['goals']
  private readonly models: Context['models']

  constructor(ctx: Context, private readonly config: BudgetConfig) {
    this.logger = ctx.logger('goal-budget')
    // Without the tracing proxy too (each method read through it builds a context): both are only asked here.
    this.goals = untraced(ctx.goals)
    this.models = untraced(ctx.models)
  }

  onTurnStart(agent: Agent, turn: number): void {
    this.meters.set(agent.id, { turn, mark: Date.now(), wrappedUp: false })
  }

  /**
   * A budget lowered below the spend (an edit) or a goal armed over budget: blocked at once, so no round
   * starts over budget. A round already running is wrapped up at its next step end.
   */
  onGoalChanged(agent: Agent, change: GoalChange): void {
    const goal = change.goal
    if (goal?.phase !== 'active') return
    let message = change.op === 'edit' ? budgetReached(goal)?.message : undefined
    // A front end refuses this up front (costBudgetProblem); a goal set another way (the API, a queued job)
    // is stopped here, before a paid round runs that could not be counted against the budget.
    if (!message && ['create', 'edit', 'resume'].includes(change.op) && goal.budgets?.costUsd !== undefined) {
      const problem = unpricedCostBudget(this.models.describe(agent.model), agent.model, goal.budgets.costUsd, this.config.prices)
      if (problem) message = `${capitalize(problem.message)}: ${problem.fix.replace(/\n\s*/g, ' ')}`
    }
    if (!message) return
    try {
      this.goals.block(agent, { id: goal.id, revision: goal.revision }, { code: BUDGET_BLOCK_CODE, message })
    } catch (error) {
      this.logger.warn('agent %s: blocking goal %s over budget failed: %s', agent.id, goal.id, describeError(error))
    }
  }

  forget(agent: { id: string }): void {
    this.meters.delete(agent.id)
  }

  /**
   * What the step's model calls used: every answer recorded for the step (one cut off by a dropped stream and
   * the call made again are both calls), priced by the usage each reported. A call that failed without a usage
   * report (the failed step's answer, a cut-off one) costs 0; one that succeeded without one stays unknown.
   */
  private stepSpend(agent: Agent, turn: number, step: number, summary: StepSummary): { tokens: number; costUsd: number | null } {
    const description = this.models.describe(agent.model)
    const answers = recordsOfTurn(agent.session.records, turn).filter((record) => isRecordOf(record, 'assistant/message') && record.data.step === step)
    let tokens = 0
    let costUsd: number | null = answers.length ? 0 : costOf(description, undefined, this.config.prices, { failed: !!summary.error })
    answers.forEach((record, index) => {
      if (!isRecordOf(record, 'assistant/message')) return
      const { usage, partial } = record.data
      const failed = !!partial || (index === answers.length - 1 && !!summary.error)
      const cost = costOf(description, usage, this.config.prices, { failed })
      tokens += tokensOf(usage)
      costUsd = costUsd === null || cost === null ? null : costUsd + cost
    })
    return { tokens, costUsd }
  }

  /**
   * One call into the goal service per step: `recordUsage` counts the step if its turn is the live goal's
   * current round, says which budgets are used up, and (asked to stop) blocks the round at its budget.
   */
  onStepEnd(agent: Agent, turn: number, step: number, summary: StepSummary): void {
    const now = Date.now()
    let meter = this.meters.get(agent.id)
    if (meter?.turn !== turn) {
      // Loaded in the middle of a turn: its time counts from this step's start.
      meter = { turn, mark: stepStart(agent, turn, step) ?? now, wrappedUp: false }
      this.meters.set(agent.id, meter)
    }
    const { tokens, costUsd } = this.stepSpend(agent, turn, step, summary)
    // A step without tool calls ends the turn: its reply is the summary, and no wrap-up call is needed.
    const wrapUp = summary.toolCalls.length > 0 && !summary.error && summary.finish !== 'max-tokens'
    let report: UsageReport | undefined
    try {
      // Once wrapped up, the agent loop holds the turn to it (a tool call is refused and ends the turn): count only.
      report = this.goals.recordUsage(agent, { turn, step, tokens, costUsd, activeTimeMs: Math.max(0, now - meter.mark) }, meter.wrappedUp ? undefined : { by: 'goal-budget', wrapUp })
    } catch (error) {
      return void this.logger.error('agent %s: counting turn %d step %d failed: %s', agent.id, turn, step, describeError(error))
    }
    // Not a call of the live goal's current round: nothing was counted.
    if (!report) return
    meter.mark = now
    // No budget used up, or stopped for another reason during this step: that stop rules.
    if (!report.stopped) return
    const reached = report.reached[0]
    this.logger.info('goal %s of agent %s blocked: %s', report.goal.id, agent.id, reached.message)
    meter.wrappedUp = true
    if (!wrapUp) return
    try {
      agent.steer({ content: wrapUpMessage(reached), source: { kind: 'plugin', name: 'goal-budget' } })
    } catch (error) {
      this.logger.warn('agent %s: the wrap-up instruction could not be added (%s); stopping the round', agent.id, describeError(error))
      agent.cancel('policy', { turn })
    }
  }
}

function stepStart(agent: Agent, turn: number, step: number): number | undefined {
  for (const record of recordsOfTurn(agent.session.records, turn)) {
    if (isRecordOf(record, 'step/start') && record.data.step === step) return record.at
  }
  return undefined
}

const capitalize = (text: string) => text.charAt(0).toUpperCase() + text.slice(1)
