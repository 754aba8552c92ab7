import { afterEach, describe, expect, it } from 'vitest'
import type { Context } from 'cordis'
import * as goalPlugin from '@goalkeeper/goal'
import { resetOnHumanInput } from '@goalkeeper/policy'
import { createHarness, done, prompt, type Harness } from '@goalkeeper/test-kit'

let harness: Harness | undefined
afterEach(() => harness?.dispose())

describe('resetOnHumanInput', () => {
  it('resets on a human message, a goal armed by a human and any policy/settled, never on other input, until unloaded', async () => {
    const h = harness = await createHarness()
    await h.load(goalPlugin, {})
    const resets: string[] = []
    const fiber = await h.load({
      name: 'counter',
      apply: (ctx: Context) => ctx.effect(function* () { yield* resetOnHumanInput(ctx, (agentId) => resets.push(agentId)) }),
    })
    const agent = await h.createAgent()
    h.scripted.push(done(), done())
    await prompt(agent, 'from a plugin', { kind: 'plugin', name: 'scheduler' })
    expect(resets).toEqual([])
    await prompt(agent, 'from a human')
    expect(resets).toEqual([agent.id])

    const goal = h.root.goals.create(agent, { objective: 'anything' })
    expect(resets).toEqual([agent.id, agent.id])
    h.root.goals.pause(agent, { id: goal.id, revision: goal.revision })
    expect(resets).toHaveLength(2)

    h.root.emit('policy/settled', agent, { source: 'other', turn: 2, action: 'continue' })
    expect(resets).toHaveLength(3)

    await fiber.dispose()
    h.scripted.push(done())
    await prompt(agent, 'after unload')
    expect(resets).toHaveLength(3)
  })
})
