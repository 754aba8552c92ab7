import type { Agent } from '@goalkeeper/agent-loop'
import type { ModelRequest, ScriptResponse } from '@goalkeeper/model'
import { createHarness, type Harness } from '@goalkeeper/test-kit'

export interface BudgetSetup {
  h: Harness
  agent: Agent
}

/**
 * The real stack with goal, tool-goal, the round driver and this plugin. With `billedAs`, the agent talks to
 * the scripted model through a provider that describes itself as that remote `vendor/model`, so prices apply.
 */
export async function setup(options: { config?: Record<string, unknown>; billedAs?: string } = {}): Promise<BudgetSetup> {
  const h = await createHarness()
  try {
    await h.load(await import('@goalkeeper/goal'), {})
    await h.load(await import('@goalkeeper/tool-goal'), { blockedThreshold: 0 })
    await h.load(await import('../src/index.ts'), options.config ?? {})
    await h.load(await import('@goalkeeper/goal-session'))
    let model = 'scripted'
    if (options.billedAs) {
      const [vendor, id] = options.billedAs.split('/')
      model = 'billed'
      h.root.models.register(model, {
        stream: (request: ModelRequest, signal: AbortSignal) => h.scripted.stream(request, signal),
        describe: () => ({ summary: `scripted, billed as ${options.billedAs}`, offline: false, vendor, model: id }),
      })
    }
    return { h, agent: await h.createAgent({ model }) }
  } catch (error) {
    await h.dispose()
    throw error
  }
}

export const usage = (inputTokens: number, outputTokens: number, cachedInputTokens = 0) => ({ inputTokens, outputTokens, cachedInputTokens })

/** A reply that calls get_goal (a harmless tool), so the round goes on to another step. */
export const working = (tokens: { inputTokens: number; outputTokens: number; cachedInputTokens?: number }): ScriptResponse =>
  ({ text: 'working', toolCalls: [{ name: 'get_goal', arguments: {} }], usage: tokens })

export function userTexts(request: ModelRequest): string[] {
  return request.messages.flatMap((m) => (m.role === 'user' ? m.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])) : []))
}
