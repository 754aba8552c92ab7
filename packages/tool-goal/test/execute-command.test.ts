import { afterEach, describe, expect, it } from 'vitest'
import type { Agent } from '@goalkeeper/agent-loop'
import { executeGoalCommand, formatGoalStatus, parseGoalCommand } from '../src/index.ts'
import { toolGoalHarness, type Harness } from './helpers.ts'

let h: Harness
afterEach(() => h?.dispose())

async function setup(): Promise<{ agent: Agent; run: (input: string) => ReturnType<typeof executeGoalCommand> }> {
  h = await toolGoalHarness()
  const agent = await h.createAgent()
  return { agent, run: (input) => executeGoalCommand(h.root, agent, parseGoalCommand(input)!) }
}

describe('executeGoalCommand', () => {
  it('answers every command on a corrupt goal log with the corruption, never with "no goal"', async () => {
    const { agent, run } = await setup()
    const goal = h.root.goals.create(agent, { objective: 'Fix the build' })
    agent.session.append<string>('goal/change', { op: 'pause', goal: { id: goal.id } })
    for (const input of ['/goal', '/goal pause', '/goal Another objective', '/goal edit']) {
      expect(run(input)).toMatchObject({ ok: false, code: 'GOAL_CORRUPT_LOG', message: expect.stringMatching(/goal log is corrupt/), goal: undefined })
    }
  })

  it('shows, creates, edits, pauses, resumes and clears', async () => {
    const { agent, run } = await setup()
    expect(run('/goal')).toEqual({ ok: true, message: 'No goal. Set one with /goal <objective>.', goal: undefined })
    const created = run('/goal Migrate the tests\nto vitest')
    expect(created).toMatchObject({ ok: true, goal: { objective: 'Migrate the tests\nto vitest', phase: 'active', activation: 'armed' } })
    expect(created.message).toMatch(/^Goal set\.\nObjective: Migrate the tests\nto vitest\nPhase: active \(armed/)
    expect(run('/goal edit --max-rounds 12 Migrate every test')).toMatchObject({ ok: true, goal: { objective: 'Migrate every test', maxGoalRounds: 12, revision: 2 } })
    expect(run('/goal PAUSE')).toMatchObject({ ok: true, goal: { phase: 'paused', activation: 'disarmed' } })
    expect(run('/goal').message).toMatch(/Phase: paused\nRounds: 0\/12/)
    expect(run('/goal resume')).toMatchObject({ ok: true, goal: { phase: 'active', activation: 'armed', revision: 4 } })
    expect(run('/goal clear')).toEqual({ ok: true, message: 'Goal cleared.' })
    expect(h.root.goals.get(agent)).toBeUndefined()
  })

  it('sets budgets at creation, shows them with the spend, and /goal budget raises a used-up one and resumes', async () => {
    const { agent, run } = await setup()
    const created = run('/goal --token-budget 100 --time-budget 30m Tidy the docs')
    expect(created.goal).toMatchObject({ budgets: { tokens: 100, activeTimeMs: 1_800_000 } })
    expect(created.message).toContain('Budgets: 100 tokens, 30m in rounds')
    let goal = created.goal!
    h.scripted.push({ text: 'worked' })
    agent.send({ content: 'round', source: { kind: 'goal', goalId: goal.id, revision: goal.revision, round: 1 } })
    await agent.whenIdle()
    h.root.goals.recordUsage(agent, { goalId: goal.id, round: 1, turn: 1, step: 1, tokens: 120, costUsd: null, activeTimeMs: 65_000 })
    goal = h.root.goals.block(agent, h.root.goals.get(agent)!, { code: 'budget-limited', message: 'The token budget is used up: 120 of 100 tokens.' })
    expect(run('/goal').message).toContain('Spent: tokens 120/100, cost unknown, time 1m 5s/30m, 1 model calls')
    expect(run('/goal resume')).toMatchObject({ ok: false, code: 'GOAL_BUDGET_LIMIT', message: expect.stringContaining('/goal budget') })
    expect(run('/goal budget --token-budget 110')).toMatchObject({ ok: true, message: expect.stringMatching(/^Budget set\./), goal: { phase: 'blocked' } })
    expect(run('/goal budget --token-budget 500')).toMatchObject({ ok: true, message: expect.stringMatching(/^Budget raised; goal resumed\./), goal: { phase: 'active', activation: 'armed', budgets: { tokens: 500, activeTimeMs: 1_800_000 } } })
  })

  it('/goal complete ends the goal as a person\'s decision, without running its check, from any phase but complete', async () => {
    const { agent, run } = await setup()
    expect(run('/goal complete')).toMatchObject({ ok: false, code: 'GOAL_NOT_FOUND' })
    const goal = h.root.goals.create(agent, { objective: 'Ship it', verify: ['exit 1'] })
    h.root.goals.pause(agent, goal)
    const done = run('/goal complete')
    expect(done).toMatchObject({ ok: true, goal: { phase: 'complete', completedBy: 'person', activation: 'disarmed' } })
    expect(done.message).toMatch(/^Goal complete, by your decision\./)
    expect(h.records(agent).filter((r) => r.type === 'goal/check')).toEqual([])
    expect(run('/goal complete')).toMatchObject({ ok: false, code: 'GOAL_INVALID_TRANSITION' })
    await h.root.sessions.flush(agent.session)
    const { foldGoal } = await import('@goalkeeper/goal')
    expect(foldGoal(h.readFile(agent))).toMatchObject({ phase: 'complete', completedBy: 'person' })
  })

  it('answers mistakes with advice, changing nothing', async () => {
    const { agent, run } = await setup()
    expect(run('/goal pause')).toMatchObject({ ok: false, code: 'GOAL_NOT_FOUND', message: expect.stringContaining('Set one with /goal <objective>') })
    run('/goal First objective')
    const again = run('/goal Second objective')
    expect(again).toMatchObject({ ok: false, code: 'GOAL_ALREADY_EXISTS', goal: { objective: 'First objective' } })
    expect(again.message).toMatch(/\/goal edit <objective>.*\/goal clear/)
    expect(run('/goal resume')).toMatchObject({ ok: false, code: 'GOAL_INVALID_TRANSITION', message: expect.stringContaining('already active') })
    expect(run('/goal edit')).toMatchObject({ ok: false, code: 'GOAL_COMMAND_INVALID' })
    expect(run('/goal edit    ')).toMatchObject({ ok: false, code: 'GOAL_COMMAND_INVALID' })
    expect(h.root.goals.get(agent)).toMatchObject({ objective: 'First objective', revision: 1 })
  })

  it('a disarmed goal reads as waiting for /goal resume, and resume re-arms it', async () => {
    const { agent, run } = await setup()
    run('/goal Keep going')
    h.root.goals.disarm(agent)
    expect(run('/goal').message).toContain('Phase: active (disarmed); /goal resume to continue')
    expect(run('/goal resume')).toMatchObject({ ok: true, goal: { activation: 'armed', revision: 2 } })
  })

  it('at the round cap, resume advises raising the cap', async () => {
    const { agent, run } = await setup()
    run('/goal --max-rounds 1 One round only')
    const goal = h.root.goals.get(agent)!
    h.scripted.push({ text: 'round 1' })
    agent.send({ content: 'round', source: { kind: 'goal', goalId: goal.id, revision: 1, round: 1 } })
    await agent.whenIdle()
    run('/goal pause')
    expect(run('/goal resume')).toMatchObject({ ok: false, code: 'GOAL_ROUND_LIMIT', message: expect.stringContaining('/goal edit --max-rounds N') })
    expect(run('/goal edit --max-rounds 2')).toMatchObject({ ok: true })
    expect(run('/goal resume')).toMatchObject({ ok: true, goal: { phase: 'active' } })
  })

  it('shows the blocker of a blocked goal', () => {
    expect(formatGoalStatus({
      id: 'g', objective: 'o', phase: 'blocked', revision: 3, maxGoalRounds: 5, roundsStarted: 5, createdAt: 1, updatedAt: 2, activation: 'disarmed',
      blockedReason: { code: 'round-limit', message: 'Used all 5 rounds' },
    })).toBe('Objective: o\nPhase: out of rounds\nRounds: 5/5\nBlocked: round-limit: Used all 5 rounds')
  })

  it('shows the condition, and what a completion stood on or why the last try did not complete', () => {
    const base = { id: 'g', objective: 'o', revision: 3, maxGoalRounds: 5, roundsStarted: 2, createdAt: 1, updatedAt: 2, activation: 'disarmed' as const, until: 'x.txt says ok' }
    const judgement = (accepted: boolean) => ({ attempts: 1, rejectionsInARow: accepted ? 0 : 1, last: { judge: 'cheap', verdict: accepted ? 'met' as const : 'not-met' as const, accepted, reasons: ['x.txt says draft.'], missing: [], diff: null } })
    expect(formatGoalStatus({ ...base, phase: 'active', judgement: judgement(false) })).toBe('Objective: o\nPhase: active (disarmed); /goal resume to continue\nRounds: 2/5\nDone when: x.txt says ok\nNot complete: judged not met by cheap: x.txt says draft.')
    expect(formatGoalStatus({ ...base, phase: 'complete', judgement: judgement(true) })).toBe('Objective: o\nPhase: complete\nRounds: 2/5\nDone when: x.txt says ok\nCompleted on: judged met by cheap')
  })
})
