import { randomBytes } from 'node:crypto'
import type { Agent } from '@goalkeeper/agent-loop'
import { createHarness, type Harness } from '@goalkeeper/test-kit'
import type { DeliveryRecord } from '../src/index.ts'

/** A fresh `whsec_` secret in a variable of its own; removed by `dropSecret`. */
export const SECRET_ENV = 'NOTIFIER_TEST_WEBHOOK_SECRET'
export function makeSecret(): string {
  const secret = `whsec_${randomBytes(24).toString('base64')}`
  process.env[SECRET_ENV] = secret
  return secret
}
export const dropSecret = () => delete process.env[SECRET_ENV]

export interface Setup {
  h: Harness
  agent: Agent
  notifier: Awaited<ReturnType<Harness['load']>>
}

/** The real loop with goal, tool-goal, the round driver (and the plugins asked for), then the notifier. */
export async function setup(config: Record<string, unknown>, options: { before?: [plugin: unknown, config?: unknown][] } = {}): Promise<Setup> {
  const h = await createHarness()
  try {
    await h.load(await import('@goalkeeper/goal'), {})
    await h.load(await import('@goalkeeper/tool-goal'), { blockedThreshold: 0 })
    for (const [plugin, pluginConfig] of options.before ?? []) await h.load(plugin, pluginConfig ?? {})
    const notifier = await h.load(await import('../src/index.ts'), { backoffMs: 1, ...config })
    await h.load(await import('@goalkeeper/goal-session'))
    return { h, agent: await h.createAgent(), notifier }
  } catch (error) {
    await h.dispose()
    throw error
  }
}

export const deliveries = (h: Harness, agent: Agent): DeliveryRecord[] =>
  h.records(agent).filter((record) => record.type === 'notify/delivery').map((record) => record.data as DeliveryRecord)

/** A round that completes the goal through update_goal, as a model would. */
export const completeStep = (h: Harness, agent: Agent) => () => {
  const goal = h.root.goals.get(agent)!
  return { toolCalls: [{ name: 'update_goal', arguments: { goal_id: goal.id, revision: goal.revision, action: 'complete' } }] }
}
