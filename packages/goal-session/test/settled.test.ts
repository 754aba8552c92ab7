import { afterEach, describe, expect, it } from 'vitest'
import type { GoalState } from '@goalkeeper/goal'
import { hangingCall } from '@goalkeeper/test-kit'
import { admittedRounds, nextEvent, outcomes, recordsOf, setup, type DriverSetup } from './helpers.ts'

let s: DriverSetup | undefined
afterEach(async () => {
  await s?.h.dispose()
  s = undefined
})

/** The promise, and whether it has resolved yet. */
function watch<T>(promise: Promise<T>): { promise: Promise<T>; resolved: () => boolean } {
  let resolved = false
  void promise.then(() => (resolved = true))
  return { promise, resolved: () => resolved }
}

describe('ctx.goalDriver.whenSettled', () => {
  it('resolves at once when there is no goal and nothing runs, and for an agent that is not live', async () => {
    s = await setup()
    const { h, agent } = s
    await expect(h.root.goalDriver.whenSettled(agent)).resolves.toBeUndefined()
    await expect(h.root.goalDriver.whenSettled({ id: 'no-such-agent' })).resolves.toBeUndefined()
  })

  it('resolves once the goal stopped running rounds: after the last round, the round-limit block and the agent at rest', async () => {
    s = await setup()
    const { h, agent } = s
    h.scripted.push({ text: 'round one' }, { text: 'round two' })
    const created = h.root.goals.create(agent, { objective: 'Ship it', maxGoalRounds: 2 })
    const goal = await h.root.goalDriver.whenSettled(agent)
    expect(goal).toMatchObject({ id: created.id, phase: 'blocked', activation: 'disarmed', roundsStarted: 2, blockedReason: { code: 'round-limit' } })
    expect(agent.status).toBe('idle')
    expect(agent.queued).toHaveLength(0)
    expect(h.root.goalDriver.current(agent)).toBeUndefined()
    expect(admittedRounds(h.records(agent))).toEqual(['1@1', '2@1'])
    expect(outcomes(h.records(agent))).toEqual(['completed', 'completed'])
  })

  it('asked in the tick a goal is created, before the driver heard of it, waits for the goal to stop', async () => {
    s = await setup({ driver: false })
    const { h, agent } = s
    let settled: Promise<GoalState | undefined> | undefined
    // Registered before the driver loads, so it runs before the driver's own listener.
    h.root.on('goal/changed', (a: { id: string }) => void (settled ??= h.root.goalDriver.whenSettled(a)))
    s.driver = await h.load(await import('../src/index.ts'))
    h.scripted.push({ text: 'round one' })
    h.root.goals.create(agent, { objective: 'Ship it', maxGoalRounds: 1 })
    expect(settled).toBeDefined()
    const goal = await settled
    expect(goal).toMatchObject({ phase: 'blocked', blockedReason: { code: 'round-limit' } })
    expect(admittedRounds(h.records(agent))).toEqual(['1@1'])
  })

  it('waits for a human turn to end when the goal does not run', async () => {
    s = await setup()
    const { h, agent } = s
    h.scripted.push({ text: 'hello' })
    agent.send({ content: 'hi' })
    const settled = await h.root.goalDriver.whenSettled(agent)
    expect(settled).toBeUndefined()
    expect(agent.status).toBe('idle')
    expect(outcomes(h.records(agent))).toEqual(['completed'])
  })

  it('does not resolve while a round runs; a pause ends the round and then it resolves with the paused goal', async () => {
    s = await setup()
    const { h, agent } = s
    const call = hangingCall()
    h.scripted.push(call.step)
    h.root.goals.create(agent, { objective: 'Ship it', maxGoalRounds: 3 })
    const settled = watch(h.root.goalDriver.whenSettled(agent))
    await call.reached
    expect(settled.resolved()).toBe(false)
    expect(h.root.goalDriver.current(agent)).toMatchObject({ round: 1, state: 'running' })
    h.root.goals.pause(agent, h.root.goals.get(agent)!)
    const goal = await settled.promise
    expect(goal).toMatchObject({ phase: 'paused', roundsStarted: 1 })
    expect(agent.status).toBe('idle')
    expect(recordsOf(h.records(agent), 'turn/end')).toEqual([{ turn: 1, outcome: { kind: 'aborted', cause: 'user' } }])
  })

  it('does not resolve while human input waits behind a goal that stopped', async () => {
    s = await setup()
    const { h, agent } = s
    const call = hangingCall()
    h.scripted.push(call.step, { text: 'answered' })
    h.root.goals.create(agent, { objective: 'Ship it', maxGoalRounds: 3 })
    await call.reached
    // The human message preempts the round; the round's turn ends, then the human turn runs.
    agent.send({ content: 'stop for a moment' })
    h.root.goals.pause(agent, h.root.goals.get(agent)!)
    const settled = watch(h.root.goalDriver.whenSettled(agent))
    await nextEvent(h.root, 'agent/turn-start', (_a: unknown, turn: number) => turn === 2)
    expect(settled.resolved()).toBe(false)
    const goal: GoalState | undefined = await settled.promise
    expect(goal).toMatchObject({ phase: 'paused' })
    expect(outcomes(h.records(agent))).toEqual(['aborted', 'completed'])
  })

  it('resolves when the driver unloads during a round, after the unload ended it', async () => {
    s = await setup()
    const { h, agent } = s
    const call = hangingCall()
    h.scripted.push(call.step)
    h.root.goals.create(agent, { objective: 'Ship it', maxGoalRounds: 3 })
    const settled = watch(h.root.goalDriver.whenSettled(agent))
    await call.reached
    const unloaded = s.driver.dispose()
    const goal = await settled.promise
    expect(goal).toMatchObject({ phase: 'active', activation: 'disarmed', roundsStarted: 1 })
    expect(agent.status).toBe('idle')
    expect(recordsOf(h.records(agent), 'turn/end')).toEqual([{ turn: 1, outcome: { kind: 'aborted', cause: 'parent' } }])
    await unloaded
  })
})
