import { afterEach, describe, expect, it } from 'vitest'
import type { Context } from 'cordis'
import * as goalPlugin from '@goalkeeper/goal'
import { resetOnRearm } from '@goalkeeper/policy'
import { createHarness, done, prompt, type Harness } from '@goalkeeper/test-kit'

let harness: Harness | undefined
afterEach(() => harness?.dispose())

describe('resetOnRearm', () => {
  it('resets on a goal armed by a human and on any policy/settled, never on a message (human or not), until unloaded', async () => {
    const h = harness = await createHarness()
    await h.load(goalPlugin, {})
    const resets: string[] = []
    const fiber = await h.load({
      name: 'counter',
      apply: (ctx: Context) => ctx.effect(function* () { yield* resetOnRearm(ctx, (agentId) => resets.push(agentId)) }),
    })
    const agent = await h.createAgent()
    h.scripted.push(done(), done())
    await prompt(agent, 'from a plugin', { kind: 'plugin', name: 'scheduler' })
    await prompt(agent, 'from a human')
    expect(resets).toEqual([])

    let goal = h.root.goals.create(agent, { objective: 'anything' })
    expect(resets).toEqual([agent.id])
    goal = h.root.goals.pause(agent, { id: goal.id, revision: goal.revision })
    expect(resets).toHaveLength(1)
    goal = h.root.goals.resume(agent, { id: goal.id, revision: goal.revision })
    expect(resets).toHaveLength(2)

    h.root.emit('policy/settled', agent, { source: 'other', turn: 2, action: 'continue' })
    h.root.emit('policy/settled', agent, { source: 'other', turn: 2, action: 'stop' })
    expect(resets).toHaveLength(4)

    await fiber.dispose()
    h.root.goals.pause(agent, { id: goal.id, revision: goal.revision })
    h.root.goals.resume(agent, { id: goal.id, revision: goal.revision + 1 })
    expect(resets).toHaveLength(4)
  })
})
