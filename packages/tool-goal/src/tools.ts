import type { Context } from 'cordis'
import type { GoalBudgets, GoalCheckRecord, GoalRef, GoalState } from '@goalkeeper/goal'
import type { ToolCallContext, ToolDefinition, ToolResult } from '@goalkeeper/tools'
import { clip, describeError } from '@goalkeeper/kit'
import { authorityOf, checkAuthority, type UpdateAction } from './authority.ts'
import { modelBlockReason } from './block-reason.ts'
import { refusedCompletion, runCheck } from './check.ts'
import { editInput } from './edit-input.ts'
import { goalView } from './status.ts'
import { wrapUpMessage } from './prompt.ts'
import { COST_UNPRICED, costBudgetRefusal } from './cost-budget.ts'

/** The last turn of each agent in which the judge ruled on a claimed completion. */
export const judgedTurns = new WeakMap<object, number>()

export interface ToolGoalConfig {
  blockedThreshold: number
  /** Timeout of each check command run on update_goal complete. */
  checkTimeoutMs: number
}

/** Told when the model completes or blocks the goal from a goal round (turn, step, new phase). */
export type OnSettled = (agentId: string, turn: number, step: number, phase: GoalState['phase']) => void

interface CreateArgs {
  objective: string
  max_rounds?: number
  token_budget?: number
  cost_budget_usd?: number
  time_budget_minutes?: number
}

interface UpdateArgs {
  goal_id: string
  revision: number
  action: UpdateAction
  objective?: string
  max_rounds?: number
  reason?: { code: string; message: string }
}

const ACTIONS: UpdateAction[] = ['edit', 'pause', 'resume', 'complete', 'block']
/** Which optional arguments each action reads; any other one is a mistake worth telling the model about. */
const ACTION_ARGS: Record<UpdateAction, (keyof UpdateArgs)[]> = {
  edit: ['objective', 'max_rounds'],
  pause: [],
  resume: [],
  complete: [],
  block: ['reason'],
}

/**
 * The schemas check only the JSON shape, which the tool pipeline validates before any tool runs. Value rules
 * (a cap of at least 1, a reason with a kebab-case code and a message) are left to the goal domain, so a
 * caller without authority hears that first and is not coached into fixing a call it may not make.
 */
export function goalTools(ctx: Context, config: ToolGoalConfig, onSettled: OnSettled = () => {}): ToolDefinition[] {
  const getGoal: ToolDefinition<Record<string, never>> = {
    name: 'get_goal',
    // It only reports: a round that calls it has not progressed.
    kind: 'session',
    readOnly: true,
    title: () => 'Read the goal',
    description: 'Read the current goal of this session: goal_id, revision, objective, phase, rounds used and cap, budgets and what was spent, and the blocker if blocked. Call it before update_goal to get goal_id and revision.',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    execute: (_args, call) => guarded(() => unreadable(ctx, call) ?? ok(ctx.goals.get(call.agent))),
  }

  const createGoal: ToolDefinition<CreateArgs> = {
    name: 'create_goal',
    kind: 'session',
    title: (args) => `Create goal ${JSON.stringify(clip(typeof args.objective === 'string' ? args.objective : '', 80))}`,
    description: 'Create the session goal, only when the user asked for it in this turn. Fails if a goal exists that is not complete.',
    parameters: {
      type: 'object',
      properties: {
        objective: { type: 'string', description: 'What must be true when the goal is done; concrete and checkable.' },
        max_rounds: { type: 'integer', description: 'Cap on automatic goal rounds, a positive whole number (default from configuration).' },
        token_budget: { type: 'integer', description: 'Only if the user gave one: tokens the rounds may use (input - cached input + output).' },
        cost_budget_usd: { type: 'number', description: 'Only if the user gave one: US dollars the rounds may cost.' },
        time_budget_minutes: { type: 'number', description: 'Only if the user gave one: minutes the rounds may run.' },
      },
      required: ['objective'],
      additionalProperties: false,
    },
    execute: (args, call) => guarded(() => {
      const refusal = checkAuthority('create', authorityOf(call.turnSources, undefined), undefined, config.blockedThreshold)
      if (refusal) return failure(refusal.code, refusal.message)
      const unpriced = costBudgetRefusal(ctx, call.agent.id, args.cost_budget_usd)
      if (unpriced) return failure(COST_UNPRICED, unpriced)
      return ok(ctx.goals.create(call.agent, { objective: args.objective, ...editInput(undefined, args.max_rounds, budgetsOf(args)) }))
    }),
  }

  const updateGoal: ToolDefinition<UpdateArgs> = {
    name: 'update_goal',
    kind: 'session',
    title: (args) => `Goal: ${typeof args.action === 'string' ? args.action : 'update'}`,
    description: 'Change the session goal. edit, pause and resume only when the user asked for it in this turn. '
      + 'complete when the objective is achieved and verified; block when it cannot progress without outside help. '
      + 'Name the goal_id and revision from get_goal; a stale revision is refused.',
    parameters: {
      type: 'object',
      properties: {
        goal_id: { type: 'string' },
        revision: { type: 'integer', description: 'The revision get_goal returned.' },
        action: { type: 'string', enum: ACTIONS },
        objective: { type: 'string', description: 'edit only: the new objective.' },
        max_rounds: { type: 'integer', description: 'edit only: the new round cap, a positive whole number.' },
        reason: {
          type: 'object',
          description: 'block only: why the goal cannot progress. It is recorded with the code "model-reported"; your label starts the message.',
          properties: {
            code: { type: 'string', description: 'A short label, e.g. "needs-credentials".' },
            message: { type: 'string', description: 'What blocks the goal and the evidence for it.' },
          },
        },
      },
      required: ['goal_id', 'revision', 'action'],
      additionalProperties: false,
    },
    execute: async (args, call) => {
      const checked = guarded(() => {
        const corrupt = unreadable(ctx, call)
        if (corrupt) return corrupt
        const live = ctx.goals.get(call.agent)
        const authority = authorityOf(call.turnSources, live)
        // Authority first: a caller without it learns nothing about its arguments or the goal.
        const refusal = checkAuthority(args.action, authority, live, config.blockedThreshold)
        if (refusal) return failure(refusal.code, refusal.message)
        const misplaced = Object.keys(args).filter((key) => !['goal_id', 'revision', 'action', ...ACTION_ARGS[args.action]].includes(key))
        if (misplaced.length) return failure('INVALID_ARGUMENTS', `${misplaced.join(', ')} does not apply to action "${args.action}"; leave it out.`)
        return undefined
      })
      if (checked) return checked
      if (args.action === 'complete') {
        const live = ctx.goals.get(call.agent)
        // The fence is checked before the check runs, so a stale call does not start commands.
        if (live && live.id === args.goal_id && live.revision === args.revision) {
          // Checks first: they are cheap and deterministic, and the judge is asked only when they pass.
          const checked = live.verify?.length ? await verifyCompletion(ctx, call, live, config.checkTimeoutMs) : { runs: [] }
          if ('ok' in checked) return checked
          const refused = await judgeCompletion(ctx, call, checked.runs)
          if (refused) return refused
        }
      }
      return guarded(() => {
        const live = ctx.goals.get(call.agent)
        // Checked again: the check took time, and a human may have changed the goal meanwhile.
        const authority = authorityOf(call.turnSources, live)
        const refusal = checkAuthority(args.action, authority, live, config.blockedThreshold)
        if (refusal) return failure(refusal.code, refusal.message)
        const ref: GoalRef = { id: args.goal_id, revision: args.revision }
        const goal = update(ctx, call, ref, args)
        if (authority === 'goal-round' && (args.action === 'complete' || args.action === 'block')) {
          onSettled(call.agent.id, call.turn, call.step, goal.phase)
          wrapUp(ctx, call, goal)
        }
        return ok(goal)
      })
    },
  }

  return [getGoal, createGoal, updateGoal]
}

/** The budgets create_goal names, in the goal domain's units; the domain judges their values. */
function budgetsOf(args: CreateArgs): GoalBudgets | undefined {
  const budgets: GoalBudgets = {}
  if (args.token_budget !== undefined) budgets.tokens = args.token_budget
  if (args.cost_budget_usd !== undefined) budgets.costUsd = args.cost_budget_usd
  // Whole milliseconds, so a fractional minute is a valid budget and not refused for its unit.
  if (args.time_budget_minutes !== undefined) budgets.activeTimeMs = Math.round(args.time_budget_minutes * 60_000)
  return Object.keys(budgets).length ? budgets : undefined
}

/** Runs the goal's check and records the attempt; a refusal the model can read when it fails, else the commands run. */
export async function verifyCompletion(ctx: Context, call: ToolCallContext, goal: GoalState, timeoutMs: number): Promise<ToolResult | { runs: GoalCheckRecord[] }> {
  const outcome = await runCheck(ctx, call, goal, timeoutMs)
  try {
    ctx.goals.recordCheck(call.agent, outcome.record)
  } catch (error) {
    // The goal changed while the check ran (cleared, completed by a human): the attempt has no goal to go with.
    ctx.logger('tool-goal').warn('agent %s: the check result could not be recorded: %s', call.agent.id, describeError(error))
  }
  if (outcome.ok) return { runs: outcome.runs }
  return failure('GOAL_CHECK_FAILED', refusedCompletion(outcome))
}

/**
 * Asks the judge, when the composition has one, whether the completion stands. The judge is configured in
 * the composition only: no tool argument reaches it, so the model can neither call nor configure it.
 */
export async function judgeCompletion(ctx: Context, call: ToolCallContext, checks: GoalCheckRecord[], claimed = true): Promise<ToolResult | undefined> {
  const judge = ctx.get('goalJudge')
  const live = ctx.goals.get(call.agent)
  const agent = ctx.get('agents')?.get(call.agent.id)
  if (!judge || !live || !agent) return undefined
  // A condition goal's round whose claim was judged here is not reviewed again when it ends.
  if (claimed) judgedTurns.set(agent, call.turn)
  try {
    const review = await judge.review(agent, live, { turn: call.turn, step: call.step, cwd: call.cwd, checks: checks.map(({ goalId: _, ...check }) => check), signal: call.signal, claimed })
    return review.stands ? undefined : failure(review.code, review.message)
  } catch (error) {
    // A judge that throws has not said "met": the completion does not stand.
    ctx.logger('tool-goal').warn('agent %s: the judge failed: %s', call.agent.id, describeError(error, { stack: true }))
    return failure('GOAL_JUDGE_FAILED', `The goal was not completed: the judge failed (${describeError(error)}).`)
  }
}

/** Tells the model to stop; the goal change has already happened, so failing here must not report it as failed. */
function wrapUp(ctx: Context, call: ToolCallContext, goal: GoalState): void {
  try {
    call.agent.steer({ content: wrapUpMessage(goal), source: { kind: 'plugin', name: 'tool-goal' } })
  } catch (error) {
    ctx.logger('tool-goal').warn('agent %s: the wrap-up message after %s could not be added: %s', call.agent.id, goal.phase, describeError(error))
  }
}

function update(ctx: Context, call: ToolCallContext, ref: GoalRef, args: UpdateArgs): GoalState {
  const goals = ctx.goals
  switch (args.action) {
    case 'edit': return goals.edit(call.agent, ref, editInput(args.objective, args.max_rounds))
    case 'pause': return goals.pause(call.agent, ref)
    case 'resume': return goals.resume(call.agent, ref)
    case 'complete': return goals.complete(call.agent, ref)
    // A missing reason is refused by the goal domain with its own advice.
    case 'block': return goals.block(call.agent, ref, modelBlockReason(args.reason))
  }
}

/** A corrupt goal log, as a failure the model can read; it must never pass for "no goal". */
function unreadable(ctx: Context, call: ToolCallContext): ToolResult | undefined {
  const health = ctx.goals.health(call.agent)
  return health.ok ? undefined : failure(health.error.code, health.error.message)
}

function ok(goal: GoalState | undefined): ToolResult {
  return { ok: true, content: JSON.stringify({ goal: goalView(goal) }) }
}

function failure(code: string, message: string): ToolResult {
  return { ok: false, content: message, error: { code, message } }
}

/** Domain errors (typed by `code`) become results the model can read and act on. */
function guarded<R extends ToolResult | undefined>(run: () => R): R | ToolResult {
  try {
    return run()
  } catch (error) {
    const code = (error as { code?: unknown })?.code
    const message = describeError(error)
    return failure(typeof code === 'string' ? code : 'TOOL_FAILED', message)
  }
}
