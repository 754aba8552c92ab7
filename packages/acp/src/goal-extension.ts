import type { GoalCommand } from '@goalkeeper/tool-goal'
import { z } from 'zod'
import { GOAL_ACTIONS } from './goal-view.ts'

/**
 * Params of `_goalkeeper/goal`. `set` needs `objective`; `edit` needs `objective` or `maxRounds`; the
 * other actions take neither. The same commands a person types as `/goal ...`.
 */
export const GoalRequest = z
  .object({
    sessionId: z.string().min(1),
    action: z.enum(GOAL_ACTIONS),
    objective: z.string().optional(),
    maxRounds: z.number().int().positive().optional(),
  })
  .strict()
  .superRefine((request, context) => {
    if (request.action === 'set' && !request.objective?.trim()) {
      context.addIssue({ code: 'custom', path: ['objective'], message: 'action "set" needs a non-empty objective' })
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
    case 'set': return { kind: 'create', objective: request.objective!, ...rounds }
    case 'edit': return { kind: 'edit', ...(request.objective === undefined ? {} : { objective: request.objective }), ...rounds }
    default: return { kind: request.action }
  }
}
