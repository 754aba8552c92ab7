import fsp from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { Agent, PromptDecision, Submission } from '@goalkeeper/agent-loop'
import type { UserMessage } from '@goalkeeper/session'
import { createHarness, hangingCall, untilGoal, untilGoalStops, type Harness } from '@goalkeeper/test-kit'
import { admittedRounds, isGoalMessage, nextEvent, outcomes, recordsOf, setup, turnsBySource, type DriverSetup } from './helpers.ts'

const cleanup: Harness[] = []
afterEach(async () => {
  for (const h of cleanup.splice(0).reverse()) await h.dispose()
})

async function tracked(promise: Promise<DriverSetup>): Promise<DriverSetup> {
  const s = await promise
  cleanup.push(s.h)
  return s
}

/** Runs one human turn to the end; used to prove that going idle does not start a round. */
async function humanTurn(h: Harness, agent: Agent) {
  h.scripted.push({ text: 'ok' })
  agent.send({ content: 'status?' })
  await nextEvent(h.root, 'agent/turn-end')
  await agent.whenIdle()
}

const goalQueued = (h: Harness, agent: Agent) =>
  (recordsOf(h.records(agent), 'input/queued') as { message: UserMessage }[]).filter((q) => isGoalMessage(q.message)).length

describe('lifecycle', () => {
  it('after a crash mid-round the reopened session is interrupted and disarmed; nothing runs until a resume', async () => {
    const a = await tracked(setup())
    const b = await createHarness()
    cleanup.push(b)
    await b.load(await import('@goalkeeper/goal'), {})
    await b.load(await import('../src/index.ts'))

    const call = hangingCall()
    a.h.scripted.push(call.step)
    a.h.root.goals.create(a.agent, { objective: 'Ship it', maxGoalRounds: 2 })
    await call.reached
    // What a killed process leaves behind: everything flushed up to the middle of round 1.
    await a.h.root.sessions.flush(a.agent.session)
    const id = a.agent.id
    await fsp.copyFile(a.agent.session.file, path.join(b.sessionsDir, `${id}.jsonl`))
    // With its seal, as the store keeps it beside the log.
    await fsp.copyFile(`${a.agent.session.file}.seal`, path.join(b.sessionsDir, `${id}.jsonl.seal`))
    await a.h.dispose()

    const agent = await b.root.agents.resume(id, { model: 'scripted' })
    expect(outcomes(b.records(agent))).toEqual(['interrupted'])
    expect(b.root.goals.get(agent)).toMatchObject({ phase: 'active', roundsStarted: 1, activation: 'disarmed' })
    const queuedBefore = goalQueued(b, agent)
    await humanTurn(b, agent)
    expect(goalQueued(b, agent)).toBe(queuedBefore)
    expect(b.scripted.requests).toHaveLength(1)

    b.scripted.push({ text: 'round two' })
    b.root.goals.resume(agent, b.root.goals.get(agent)!)
    const goal = await untilGoalStops(b.root, agent)
    expect(admittedRounds(b.records(agent))).toEqual(['1@1', '2@2'])
    expect(goal).toMatchObject({ phase: 'blocked', blockedReason: { code: 'round-limit' } })
  })

  it('disarms a goal that existed before the driver was loaded; nothing runs until a resume', async () => {
    const s = await tracked(setup({ driver: false }))
    const { h, agent } = s
    h.root.goals.create(agent, { objective: 'Ship it', maxGoalRounds: 1 })
    expect(h.root.goals.get(agent)?.activation).toBe('armed')
    s.driver = await h.load(await import('../src/index.ts'))
    expect(h.root.goals.get(agent)).toMatchObject({ phase: 'active', activation: 'disarmed' })
    await humanTurn(h, agent)
    expect(goalQueued(h, agent)).toBe(0)

    h.scripted.push({ text: 'round one' })
    h.root.goals.resume(agent, h.root.goals.get(agent)!)
    await untilGoalStops(h.root, agent)
    expect(admittedRounds(h.records(agent))).toEqual(['1@2'])
  })

  it('unloading during a round cancels it; the goal ends active and disarmed, the agent idle, no later round', async () => {
    const s = await tracked(setup())
    const { h, agent } = s
    const call = hangingCall()
    h.scripted.push(call.step)
    h.root.goals.create(agent, { objective: 'Ship it', maxGoalRounds: 3 })
    await call.reached
    await s.driver.dispose()
    expect(agent.status).toBe('idle')
    expect(agent.turn).toBeUndefined()
    expect(h.root.goals.get(agent)).toMatchObject({ phase: 'active', roundsStarted: 1, activation: 'disarmed' })
    expect(recordsOf(h.records(agent), 'turn/end')).toEqual([{ turn: 1, outcome: { kind: 'aborted', cause: 'parent' } }])
    await humanTurn(h, agent)
    expect(admittedRounds(h.records(agent))).toEqual(['1@1'])
    expect(goalQueued(h, agent)).toBe(1)
  })

  it('unloading while a round is under admission drops it without using a round', async () => {
    const s = await tracked(setup())
    const { h, agent } = s
    let unloading: Promise<void> | undefined
    h.root.on('agent/prompt-submit', async (a: Agent, submission: Submission, next: () => Promise<PromptDecision>) => {
      if (!unloading && submission.messages.some(isGoalMessage)) {
        unloading = s.driver.dispose()
        // The driver's shutdown has begun once it disarms the goal.
        await untilGoal(h.root, a, (g) => g?.activation === 'disarmed')
      }
      return next()
    })
    h.root.goals.create(agent, { objective: 'Ship it', maxGoalRounds: 3 })
    await nextEvent(h.root, 'goal/activation', (_a: Agent, activation: string) => activation === 'disarmed')
    await unloading
    expect(agent.status).toBe('idle')
    const records = h.records(agent)
    expect(turnsBySource(records)).toEqual([])
    expect(recordsOf(records, 'input/rejected')).toHaveLength(1)
    expect(h.root.goals.get(agent)).toMatchObject({ phase: 'active', roundsStarted: 0, activation: 'disarmed' })
    expect(h.scripted.requests).toHaveLength(0)
  })

  it('unloading right after the fence admitted a round vetoes it as its turn opens', async () => {
    const s = await tracked(setup())
    const { h, agent } = s
    let unloading: Promise<void> | undefined
    // Outside the fence: the unload starts in the microtasks between the fence's decision and the turn.
    h.root.on('agent/prompt-submit', async (_a: Agent, submission: Submission, next: () => Promise<PromptDecision>) => {
      const decision = await next()
      if (!unloading && submission.messages.some(isGoalMessage)) queueMicrotask(() => void (unloading = s.driver.dispose()))
      return decision
    }, { prepend: true })
    h.root.goals.create(agent, { objective: 'Ship it', maxGoalRounds: 3 })
    await nextEvent(h.root, 'session/event', (_s: unknown, record: { type: string }) => record.type === 'input/rejected')
    await unloading
    expect(agent.status).toBe('idle')
    expect(turnsBySource(h.records(agent))).toEqual([])
    expect(recordsOf(h.records(agent), 'input/rejected').map((data: any) => data.reason)).toEqual(['stale-goal-round'])
    expect(h.root.goals.get(agent)).toMatchObject({ phase: 'active', roundsStarted: 0, activation: 'disarmed' })
    expect(h.scripted.requests).toHaveLength(0)
  })

  it('unloading while a round is queued but not yet taken drops it at admission', async () => {
    const s = await tracked(setup())
    const { h, agent } = s
    let unloading: Promise<void> | undefined
    h.root.on('agent/queued', (_a: Agent, message: UserMessage) => {
      if (!unloading && isGoalMessage(message)) unloading = s.driver.dispose()
    })
    h.root.goals.create(agent, { objective: 'Ship it', maxGoalRounds: 3 })
    await nextEvent(h.root, 'agent/queued')
    await unloading
    expect(agent.status).toBe('idle')
    expect(turnsBySource(h.records(agent))).toEqual([])
    expect(recordsOf(h.records(agent), 'input/rejected')).toHaveLength(1)
    expect(h.root.goals.get(agent)).toMatchObject({ phase: 'active', roundsStarted: 0, activation: 'disarmed' })
  })

  it('provides ctx.goalDriver while loaded: it names the round it holds and where it is', async () => {
    const s = await tracked(setup())
    const { h, agent } = s
    expect(h.root.goalDriver.current(agent)).toBeUndefined()
    const seen: unknown[] = []
    h.root.on('agent/queued', (a: Agent, message: UserMessage) => {
      if (isGoalMessage(message)) queueMicrotask(() => seen.push(h.root.goalDriver.current(a)))
    })
    h.root.on('agent/turn-start', (a: Agent) => seen.push(h.root.goalDriver.current(a)))
    h.scripted.push({ text: 'round one' })
    const goal = h.root.goals.create(agent, { objective: 'Ship it', maxGoalRounds: 1 })
    await untilGoalStops(h.root, agent)
    const round = { goalId: goal.id, revision: 1, round: 1 }
    expect(seen).toEqual([{ ...round, state: 'queued' }, { ...round, state: 'running' }])
    expect(h.root.goalDriver.current(agent)).toBeUndefined()
    await s.driver.dispose()
    expect(h.root.get('goalDriver')).toBeUndefined()
  })

  it('a reloaded driver starts disarmed and continues after a resume', async () => {
    const s = await tracked(setup())
    const { h, agent } = s
    const second = hangingCall()
    h.scripted.push({ text: 'round one' }, second.step)
    h.root.goals.create(agent, { objective: 'Ship it', maxGoalRounds: 3 })
    await second.reached
    await s.driver.dispose()
    s.driver = await h.load(await import('../src/index.ts'))
    expect(h.root.goals.get(agent)).toMatchObject({ phase: 'active', roundsStarted: 2, activation: 'disarmed' })
    h.scripted.push({ text: 'round three' })
    h.root.goals.resume(agent, h.root.goals.get(agent)!)
    const goal = await untilGoalStops(h.root, agent)
    expect(admittedRounds(h.records(agent))).toEqual(['1@1', '2@1', '3@2'])
    expect(goal).toMatchObject({ phase: 'blocked', blockedReason: { code: 'round-limit' } })
  })
})
