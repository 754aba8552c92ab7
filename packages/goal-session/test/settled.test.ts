// ctx.goalDriver.whenSettled: the one wait for "no goal round queued or running, and none will start".
import { afterEach, describe, expect, it } from 'vitest'
import { hangingCall, type Harness } from '@goalkeeper/test-kit'
import { admittedRounds, setup, type DriverSetup } from './helpers.ts'

const cleanup: Harness[] = []
afterEach(async () => {
  for (const h of cleanup.splice(0).reverse()) await h.dispose()
})

async function tracked(promise: Promise<DriverSetup>): Promise<DriverSetup> {
  const s = await promise
  cleanup.push(s.h)
  return s
}

describe('whenSettled', () => {
  it('resolves once the rounds stop, not between them, with the goal as it ended', async () => {
    const { h, agent } = await tracked(setup())
    h.scripted.push({ text: 'round one' }, { text: 'round two' })
    h.root.goals.create(agent, { objective: 'Ship it', maxGoalRounds: 2 })
    const idles: number[] = []
    h.root.on('agent/status', (_agent, status) => void (status === 'idle' && idles.push(admittedRounds(h.records(agent)).length)))
    const goal = await h.root.goalDriver.whenSettled(agent)
    // The agent went idle after round 1 too; the wait went on through it.
    expect(idles).toEqual([1, 2])
    expect(goal).toMatchObject({ phase: 'blocked', blockedReason: { code: 'round-limit' }, activation: 'disarmed' })
    expect(agent.status).toBe('idle')
    expect(admittedRounds(h.records(agent))).toEqual(['1@1', '2@1'])
  })

  it('resolves at once for an idle agent without a runnable goal, and for an agent that is gone', async () => {
    const { h, agent } = await tracked(setup())
    await expect(h.root.goalDriver.whenSettled(agent)).resolves.toBeUndefined()
    h.root.goals.create(agent, { objective: 'Later', maxGoalRounds: 2 })
    h.root.goals.pause(agent, h.root.goals.get(agent)!)
    await expect(h.root.goalDriver.whenSettled(agent)).resolves.toMatchObject({ phase: 'paused' })
    await expect(h.root.goalDriver.whenSettled({ id: 'no-such-agent' })).resolves.toBeUndefined()
  })

  it('a cancel pauses the running round\'s goal, and the wait resolves once its turn is over', async () => {
    const { h, agent } = await tracked(setup())
    const call = hangingCall()
    h.scripted.push(call.step)
    h.root.goals.create(agent, { objective: 'Ship it', maxGoalRounds: 3 })
    await call.reached
    const settled = h.root.goalDriver.whenSettled(agent)
    agent.cancel('user')
    const goal = await settled
    expect(goal).toMatchObject({ phase: 'paused', roundsStarted: 1 })
    expect(agent.status).toBe('idle')
  })

  it('resolves when the driver unloads mid-round, once the round it cancels is over', async () => {
    const s = await tracked(setup())
    const { h, agent } = s
    const call = hangingCall()
    h.scripted.push(call.step)
    h.root.goals.create(agent, { objective: 'Ship it', maxGoalRounds: 3 })
    await call.reached
    const settled = h.root.goalDriver.whenSettled(agent)
    let resolved = false
    void settled.then(() => (resolved = true))
    await Promise.resolve()
    expect(resolved).toBe(false)
    await s.driver.dispose()
    const goal = await settled
    expect(goal).toMatchObject({ phase: 'active', activation: 'disarmed', roundsStarted: 1 })
    expect(agent.status).toBe('idle')
  })
})
