import type { Agent } from '@goalkeeper/agent-loop'
import type { GoalState } from '@goalkeeper/goal'
import type { ModelMessage, ScriptToolCall } from '@goalkeeper/model'
import type { UserMessage } from '@goalkeeper/session'
import { createHarness, type Harness } from '@goalkeeper/test-kit'

export type { Harness }

/** Core harness + goal + tool-goal, as cordis.yml composes them. */
export async function toolGoalHarness(config: Record<string, unknown> = {}, options: { workspaceTools?: Record<string, unknown> | false } = {}): Promise<Harness> {
  const harness = await createHarness({ workspaceTools: false })
  if (options.workspaceTools) await harness.load(await import('@goalkeeper/workspace-tools'), options.workspaceTools)
  try {
    await harness.load(await import('@goalkeeper/goal'), {})
    await harness.load(await import('../src/index.ts'), config)
  } catch (error) {
    await harness.dispose()
    throw error
  }
  return harness
}

export interface ToolOutcome {
  name: string
  ok: boolean
  content: string
  error?: { code: string; message: string }
}

/** Tool calls and their results, in order. */
export function toolOutcomes(h: Harness, agent: Agent): ToolOutcome[] {
  const records = h.records(agent)
  return records.filter((r) => r.type === 'tool/result').map((r) => {
    const data = r.data as { callId: string; ok: boolean; content: string; error?: { code: string; message: string } }
    const call = records.find((c) => c.type === 'tool/call' && (c.data as { callId: string }).callId === data.callId)
    return { name: (call?.data as { name: string }).name, ok: data.ok, content: data.content, ...(data.error ? { error: data.error } : {}) }
  })
}

export function call(name: string, args: Record<string, unknown> = {}): { toolCalls: ScriptToolCall[] } {
  return { toolCalls: [{ name, arguments: args }] }
}

export function update(goal: Pick<GoalState, 'id' | 'revision'>, action: string, extra: Record<string, unknown> = {}) {
  return call('update_goal', { goal_id: goal.id, revision: goal.revision, action, ...extra })
}

/** The goal round message the round driver would send for the live goal. */
export function roundOf(goal: GoalState, over: Partial<{ goalId: string; revision: number; round: number }> = {}) {
  return { content: `<goal_round>\nObjective: ${JSON.stringify(goal.objective)}`, source: { kind: 'goal' as const, goalId: goal.id, revision: goal.revision, round: goal.roundsStarted + 1, ...over } }
}

export function userTexts(messages: ModelMessage[]): string[] {
  return messages.filter((m): m is Extract<ModelMessage, { role: 'user' }> => m.role === 'user').map((m) => m.content.map((b) => b.text).join(''))
}

export function pluginMessages(h: Harness, agent: Agent): UserMessage[] {
  return h.records(agent).filter((r) => r.type === 'user/message').map((r) => r.data as UserMessage).filter((m) => m.source.kind === 'plugin')
}
