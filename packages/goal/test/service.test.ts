import { afterEach, describe, expect, it, vi } from 'vitest'
import type { Agent } from '@goalkeeper/agent-loop'
import { foldGoal, type GoalChange, type GoalState } from '../src/index.ts'
import { codeOf, goalHarness, type Harness } from './helpers.ts'

let h: Harness
afterEach(async () => {
  vi.restoreAllMocks()
  await h?.dispose()
})

const ref = (goal: GoalState) => ({ id: goal.id, revision: goal.revision })
const reason = { code: 'needs-access', message: 'No registry credentials' }

async function setup(config: Record<string, unknown> = {}): Promise<{ agent: Agent; goals: Harness['root']['goals'] }> {
  h = await goalHarness(config)
  const agent = await h.createAgent()
  return { agent, goals: h.root.goals }
}

/** A new goal with a cap of 1 whose one round has run: active, armed, and out of rounds. */
async function goalAtCap(agent: Agent): Promise<GoalState> {
  const goal = h.root.goals.create(agent, { objective: 'A', maxGoalRounds: 1 })
  h.scripted.push({ text: 'worked' })
  agent.send({ content: 'round', source: { kind: 'goal', goalId: goal.id, revision: 1, round: 1 } })
  await agent.whenIdle()
  return h.root.goals.get(agent)!
}

function goalRecords(agent: Agent) {
  return h.records(agent).filter((record) => record.type === 'goal/change')
}

describe('ctx.goals mutations', () => {
  it('create appends one snapshot record, arms, and emits goal/changed then goal/activation', async () => {
    const { agent, goals } = await setup()
    const events = h.events(['goal/changed', 'goal/activation'])
    const goal = goals.create(agent, { objective: '  Make the tests pass \n' })
    expect(goal).toMatchObject({ objective: 'Make the tests pass', phase: 'active', revision: 1, maxGoalRounds: 256, roundsStarted: 0, activation: 'armed' })
    const records = goalRecords(agent)
    expect(records).toHaveLength(1)
    const { activation: _, ...persisted } = goal
    expect(records[0].data).toEqual({ op: 'create', goal: persisted })
    expect(events.map((e) => e.name)).toEqual(['goal/changed', 'goal/activation'])
    const change = events[0].args[1] as GoalChange
    expect(change).toEqual({ op: 'create', seq: records[0].seq, goal: persisted, previous: undefined })
    expect(events[1].args[1]).toBe('armed')
    // Nothing reaches the inbox or the model.
    expect(h.records(agent).map((r) => r.type)).toEqual(['session/header', 'goal/change'])
    expect(agent.queued).toHaveLength(0)
  })

  it('walks every transition with the right activation', async () => {
    const { agent, goals } = await setup()
    let goal = goals.create(agent, { objective: 'A', maxGoalRounds: 4 })
    goal = goals.edit(agent, ref(goal), { objective: 'B' })
    expect(goal).toMatchObject({ phase: 'active', activation: 'armed', revision: 2, objective: 'B' })
    goal = goals.pause(agent, ref(goal))
    expect(goal).toMatchObject({ phase: 'paused', activation: 'disarmed', revision: 3 })
    goal = goals.edit(agent, ref(goal), { maxGoalRounds: 9 })
    expect(goal).toMatchObject({ phase: 'paused', activation: 'disarmed', maxGoalRounds: 9 })
    goal = goals.resume(agent, ref(goal))
    expect(goal).toMatchObject({ phase: 'active', activation: 'armed', revision: 5 })
    goal = goals.block(agent, ref(goal), reason)
    expect(goal).toMatchObject({ phase: 'blocked', activation: 'disarmed', blockedReason: reason })
    goal = goals.resume(agent, ref(goal))
    expect(goal).toMatchObject({ phase: 'active', activation: 'armed' })
    expect(goal.blockedReason).toBeUndefined()
    goal = goals.complete(agent, ref(goal))
    expect(goal).toMatchObject({ phase: 'complete', activation: 'disarmed', revision: 8 })
    goals.clear(agent, ref(goal))
    expect(goals.get(agent)).toBeUndefined()
    expect(goalRecords(agent).map((r) => (r.data as { op: string }).op)).toEqual(['create', 'edit', 'pause', 'edit', 'resume', 'block', 'resume', 'complete', 'clear'])
    expect(goalRecords(agent).at(-1)!.data).toEqual({ op: 'clear', goal: null, cleared: { id: goal.id, revision: 8 } })
  })

  it('clear of an armed goal disarms: goal/changed with no goal, then goal/activation disarmed', async () => {
    const { agent, goals } = await setup()
    const goal = goals.create(agent, { objective: 'A' })
    const events = h.events(['goal/changed', 'goal/activation'])
    goals.clear(agent, ref(goal))
    expect(events.map((e) => [e.name, e.name === 'goal/changed' ? (e.args[1] as GoalChange).goal : e.args[1]])).toEqual([['goal/changed', undefined], ['goal/activation', 'disarmed']])
    // The next goal is armed by its own create, not by anything left over.
    expect(goals.create(agent, { objective: 'B' }).activation).toBe('armed')
  })

  it('refuses illegal transitions, writing nothing', async () => {
    const { agent, goals } = await setup()
    expect(codeOf(() => goals.pause(agent, { id: 'none', revision: 1 }))).toBe('GOAL_NOT_FOUND')
    const goal = goals.create(agent, { objective: 'A' })
    const before = h.records(agent).length
    expect(codeOf(() => goals.resume(agent, ref(goal)))).toBe('GOAL_INVALID_TRANSITION') // active and armed
    expect(codeOf(() => goals.create(agent, { objective: 'B' }))).toBe('GOAL_ALREADY_EXISTS')
    const paused = goals.pause(agent, ref(goal))
    expect(codeOf(() => goals.pause(agent, ref(paused)))).toBe('GOAL_INVALID_TRANSITION')
    expect(codeOf(() => goals.block(agent, ref(paused), reason))).toBe('GOAL_INVALID_TRANSITION')
    const complete = goals.complete(agent, ref(paused))
    for (const run of [() => goals.pause(agent, ref(complete)), () => goals.resume(agent, ref(complete)), () => goals.complete(agent, ref(complete)), () => goals.block(agent, ref(complete), reason)]) {
      expect(codeOf(run)).toBe('GOAL_INVALID_TRANSITION')
    }
    expect(goals.edit(agent, ref(complete), { objective: 'C' })).toMatchObject({ phase: 'complete', objective: 'C' })
    expect(h.records(agent).length).toBe(before + 3)
  })

  it('a stale revision or another goal id is refused with advice', async () => {
    const { agent, goals } = await setup()
    const first = goals.create(agent, { objective: 'A' })
    goals.edit(agent, ref(first), { objective: 'B' })
    expect(codeOf(() => goals.pause(agent, ref(first)))).toBe('GOAL_STALE_REVISION')
    expect(() => goals.pause(agent, ref(first))).toThrow(/revision 2, not 1.*Read it again/)
    expect(codeOf(() => goals.pause(agent, { id: 'other', revision: 2 }))).toBe('GOAL_NOT_FOUND')
    expect(goals.get(agent)?.revision).toBe(2)
  })

  it('create after complete makes a new goal id; clear then create too', async () => {
    const { agent, goals } = await setup()
    const first = goals.create(agent, { objective: 'A' })
    goals.complete(agent, ref(first))
    const second = goals.create(agent, { objective: 'B' })
    expect(second.id).not.toBe(first.id)
    expect(second).toMatchObject({ revision: 1, roundsStarted: 0, activation: 'armed' })
    goals.clear(agent, ref(second))
    const third = goals.create(agent, { objective: 'C' })
    expect(new Set([first.id, second.id, third.id]).size).toBe(3)
    expect(foldGoal(h.records(agent))).toMatchObject({ id: third.id, objective: 'C' })
  })

  it('cap edits on a blocked goal keep the reason; resume is refused at the cap', async () => {
    const { agent, goals } = await setup()
    let goal = await goalAtCap(agent)
    goal = goals.block(agent, ref(goals.get(agent)!), { code: 'round-limit', message: 'Used 1 of 1 rounds' })
    expect(codeOf(() => goals.resume(agent, ref(goal)))).toBe('GOAL_ROUND_LIMIT')
    goal = goals.edit(agent, ref(goal), { maxGoalRounds: 3 })
    expect(goal).toMatchObject({ phase: 'blocked', maxGoalRounds: 3, roundsStarted: 1, blockedReason: { code: 'round-limit', message: 'Used 1 of 1 rounds' } })
    expect(goals.resume(agent, ref(goal))).toMatchObject({ phase: 'active', activation: 'armed' })
  })

  it('re-arming an active, disarmed goal is refused at the cap, writing nothing', async () => {
    const { agent, goals } = await setup()
    const goal = await goalAtCap(agent)
    goals.disarm(agent)
    const events = h.events(['goal/changed', 'goal/activation'])
    expect(codeOf(() => goals.resume(agent, ref(goal)))).toBe('GOAL_ROUND_LIMIT')
    expect(goals.get(agent)).toMatchObject({ phase: 'active', revision: 1, roundsStarted: 1, activation: 'disarmed' })
    expect(goalRecords(agent)).toHaveLength(1)
    expect(events).toEqual([])
  })

  it('resume re-arms an active, disarmed goal with a new revision', async () => {
    const { agent, goals } = await setup()
    const goal = goals.create(agent, { objective: 'A' })
    const events = h.events(['goal/changed', 'goal/activation'])
    goals.disarm(agent)
    expect(events.map((e) => [e.name, e.args[1]])).toEqual([['goal/activation', 'disarmed']])
    expect(goalRecords(agent)).toHaveLength(1)
    expect(goals.get(agent)).toMatchObject({ revision: 1, activation: 'disarmed' })
    goals.disarm(agent) // already disarmed: no change, no event
    expect(events).toHaveLength(1)
    const resumed = goals.resume(agent, ref(goal))
    expect(resumed).toMatchObject({ phase: 'active', revision: 2, activation: 'armed' })
    expect(events.map((e) => e.name)).toEqual(['goal/activation', 'goal/changed', 'goal/activation'])
  })

  it('validates input with typed errors', async () => {
    const { agent, goals } = await setup()
    expect(codeOf(() => goals.create(agent, { objective: '   ' }))).toBe('GOAL_INVALID_OBJECTIVE')
    expect(codeOf(() => goals.create(agent, { objective: 'A', maxGoalRounds: 0 }))).toBe('GOAL_INVALID_MAX_ROUNDS')
    const goal = goals.create(agent, { objective: 'A' })
    expect(codeOf(() => goals.block(agent, ref(goal), { code: 'Bad Code', message: 'x' }))).toBe('GOAL_INVALID_BLOCK_REASON')
    expect(codeOf(() => goals.pause({ id: 'no-such-agent' }, ref(goal)))).toBe('GOAL_NO_AGENT')
    expect(goalRecords(agent)).toHaveLength(1)
  })

  it('answers questions about an agent not live here without throwing: no goal, nothing to report', async () => {
    const { goals } = await setup()
    expect(goals.get({ id: 'no-such-agent' })).toBeUndefined()
    expect(goals.health({ id: 'no-such-agent' })).toEqual({ ok: true })
  })

  it('a throwing goal/changed listener is logged and the mutation stands', async () => {
    const { agent, goals } = await setup()
    const logged = new Promise<void>((resolve) => h.root.logger.exporter({
      export: (message) => { if (message.type === 'error' && message.args.some((arg) => String(arg).includes('listener exploded'))) resolve() },
    }))
    h.root.on('goal/changed', () => {
      throw new Error('listener exploded')
    })
    const seen: string[] = []
    h.root.on('goal/changed', (_agent, change) => void seen.push(change.op))
    const goal = goals.create(agent, { objective: 'A' })
    expect(goals.get(agent)).toMatchObject({ id: goal.id, phase: 'active' })
    expect(seen).toEqual(['create'])
    await logged
  })

  it('a mutation from a session/event listener inside another append is refused with GOAL_BUSY; reads there see the new state', async () => {
    const { agent, goals } = await setup()
    const order: string[] = []
    h.root.on('goal/changed', (_agent, change) => void order.push(`changed ${change.op} @${change.seq}`))
    h.root.on('goal/activation', (_agent, activation) => void order.push(`activation ${activation}`))
    const inside: unknown[] = []
    h.root.on('session/event', (_session, record) => {
      if (record.type !== 'goal/change') return
      const seen = goals.get(agent)
      inside.push(seen && { phase: seen.phase, revision: seen.revision, activation: seen.activation })
      inside.push(codeOf(() => goals.pause(agent, ref(seen!))))
      // A process-local disarm is not a record: it is allowed, and announced once, after goal/changed.
      if ((record.data as { op: string }).op === 'resume') goals.disarm(agent)
    })
    const goal = goals.create(agent, { objective: 'A' })
    expect(goal).toMatchObject({ phase: 'active', revision: 1, activation: 'armed' })
    goals.disarm(agent)
    const resumed = goals.resume(agent, ref(goals.get(agent)!))
    expect(inside).toEqual([
      { phase: 'active', revision: 1, activation: 'armed' }, 'GOAL_BUSY',
      { phase: 'active', revision: 2, activation: 'armed' }, 'GOAL_BUSY',
    ])
    expect(resumed).toMatchObject({ revision: 2, activation: 'disarmed' })
    expect(goals.get(agent)).toMatchObject({ revision: 2, activation: 'disarmed' })
    expect(order).toEqual(['changed create @1', 'activation armed', 'activation disarmed', 'changed resume @2'])
    expect(goalRecords(agent).map((r) => (r.data as { op: string }).op)).toEqual(['create', 'resume'])
    await h.root.sessions.flush(agent.session)
    expect(foldGoal(h.readFile(agent))).toMatchObject({ phase: 'active', revision: 2 })
  })

  it('a mutation made from a goal/changed listener lands after the one that fired it, in record order', async () => {
    const { agent, goals } = await setup()
    const order: string[] = []
    h.root.on('goal/changed', (_agent, change) => {
      order.push(`changed ${change.op} @${change.seq}`)
      if (change.op === 'create') goals.pause(agent, ref(change.goal as GoalState))
    })
    h.root.on('goal/activation', (_agent, activation) => void order.push(`activation ${activation}`))
    goals.create(agent, { objective: 'A' })
    const seqs = goalRecords(agent).map((r) => r.seq)
    expect(order).toEqual([`changed create @${seqs[0]}`, `changed pause @${seqs[1]}`, 'activation disarmed'])
    expect(goals.get(agent)).toMatchObject({ phase: 'paused', activation: 'disarmed' })
  })

  it('clamps a clock that steps back so the log stays replayable', async () => {
    const { agent, goals } = await setup()
    const goal = goals.create(agent, { objective: 'A' })
    vi.spyOn(Date, 'now').mockReturnValue(goal.updatedAt - 60_000)
    const paused = goals.pause(agent, ref(goal))
    expect(paused.updatedAt).toBe(goal.updatedAt)
    vi.restoreAllMocks()
    await h.root.sessions.flush(agent.session)
    expect(foldGoal(h.readFile(agent))).toMatchObject({ phase: 'paused', updatedAt: goal.updatedAt })
  })
})

describe('goal plugin config', () => {
  it('uses defaultMaxGoalRounds for new goals', async () => {
    const { agent, goals } = await setup({ defaultMaxGoalRounds: 7 })
    expect(goals.create(agent, { objective: 'A' }).maxGoalRounds).toBe(7)
  })

  it('an invalid defaultMaxGoalRounds fails plugin load with a clear error', async () => {
    h = await goalHarness()
    for (const bad of [0, -3, 2.5, 'many']) {
      await expect(h.load(await import('../src/index.ts'), { defaultMaxGoalRounds: bad })).rejects.toThrow(/defaultMaxGoalRounds/)
    }
  })
})
