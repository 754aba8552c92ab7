import type { GoalCommand } from '@goalkeeper/tool-goal'
import { z } from 'zod'
import { GOAL_ACTIONS } from './goal-view.ts'

/**
 * Params of `_goalkeeper/goal`. `set` needs `objective` or `until` (a goal defined by a condition, whose
 * objective defaults to the condition, as `goal --until`); `edit` needs `objective` or `maxRounds`; the
 * other actions take none of them. The same commands a person types as `/goal ...`.
 */
export const GoalRequest = z
  .object({
    sessionId: z.string().min(1),
    action: z.enum(GOAL_ACTIONS),
    objective: z.string().optional(),
    maxRounds: z.number().int().positive().optional(),
    until: z.string().optional(),
  })
  .strict()
  .superRefine((request, context) => {
    if (request.action === 'set' && !request.objective?.trim() && !request.until?.trim()) {
      context.addIssue({ code: 'custom', path: ['objective'], message: 'action "set" needs a non-empty objective' })
    }
    if (request.until !== undefined && (request.action !== 'set' || !request.until.trim())) {
      context.addIssue({ code: 'custom', path: ['until'], message: request.action === 'set' ? 'until, when given, is a non-empty condition' : `action "${request.action}" takes no until: a condition is set with the goal` })
    }
    if (request.action === 'edit' && request.objective === undefined && request.maxRounds === undefined) {
      context.addIssue({ code: 'custom', path: ['objective'], message: 'action "edit" needs an objective or maxRounds' })
    }
    if (!['set', 'edit'].includes(request.action) && (request.objective !== undefined || request.maxRounds !== undefined)) {
      context.addIssue({ code: 'custom', path: ['action'], message: `action "${request.action}" takes no objective or maxRounds` })
    }
  })
export type GoalRequest = z.infer<typeof GoalRequest>

/** The `/goal` command an extension request stands for. */
export function goalCommandOf(request: GoalRequest): GoalCommand {
  const rounds = request.maxRounds === undefined ? {} : { maxGoalRounds: request.maxRounds }
  switch (request.action) {
    case 'get': return { kind: 'show' }
    case 'set': return { kind: 'create', objective: request.objective?.trim() ? request.objective : request.until!, ...rounds, ...(request.until === undefined ? {} : { until: request.until }) }
    case 'edit': return { kind: 'edit', ...(request.objective === undefined ? {} : { objective: request.objective }), ...rounds }
    default: return { kind: request.action }
  }
}
