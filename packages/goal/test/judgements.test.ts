import { afterEach, describe, expect, it } from 'vitest'
import type { Agent } from '@goalkeeper/agent-loop'
import { foldGoal, type GoalJudgementRecord, type GoalState } from '../src/index.ts'
import { codeOf, goalHarness, type Harness } from './helpers.ts'

let h: Harness
afterEach(async () => {
  await h?.dispose()
})

async function setup(): Promise<{ agent: Agent; goal: GoalState }> {
  h = await goalHarness()
  const agent = await h.createAgent()
  return { agent, goal: h.root.goals.create(agent, { objective: 'Ship it' }) }
}

const judgement = (goal: GoalState, over: Partial<GoalJudgementRecord> = {}): GoalJudgementRecord =>
  ({ goalId: goal.id, judge: 'cheap', verdict: 'not-met', accepted: false, reasons: ['No test ran.'], missing: [], diff: null, ...over })

describe('goal/judgement records', () => {
  it('fold into the goal: attempts, rejections in a row (reset by an accepted one), and the last decision', async () => {
    const { agent, goal } = await setup()
    h.root.goals.recordJudgement(agent, judgement(goal))
    const twice = h.root.goals.recordJudgement(agent, judgement(goal, { verdict: 'cannot-tell', missing: ['test output'] }))
    expect(twice.judgement).toEqual({ attempts: 2, rejectionsInARow: 2, last: { judge: 'cheap', verdict: 'cannot-tell', accepted: false, reasons: ['No test ran.'], missing: ['test output'], diff: null } })
    // Not a mutation: the revision stays.
    expect(twice.revision).toBe(goal.revision)
    const diff = { summary: ' a.ts | 2 +-', sha256: 'a'.repeat(64) }
    const met = h.root.goals.recordJudgement(agent, judgement(goal, { verdict: 'met', accepted: true, diff }))
    expect(met.judgement).toMatchObject({ attempts: 3, rejectionsInARow: 0, last: { verdict: 'met', diff } })
    // The judgement rides along on later snapshots, and the log replays to the live state.
    h.root.goals.complete(agent, met)
    await h.root.sessions.flush(agent.session)
    const { activation: _, ...live } = h.root.goals.get(agent)!
    expect(foldGoal(h.readFile(agent))).toEqual(live)
  })

  it('refuses a judgement it could not replay, before writing it', async () => {
    const { agent, goal } = await setup()
    const bad: [Partial<GoalJudgementRecord> & Record<string, unknown>, RegExp][] = [
      [{ verdict: 'maybe' as never }, /verdict "maybe" is not one of/],
      [{ verdict: 'not-met', accepted: true }, /cannot be accepted/],
      [{ reasons: ['x'.repeat(1001)] }, /reasons and missing are lists/],
      [{ diff: { summary: 'x', sha256: 'nope' } }, /SHA-256/],
      [{ goalId: 'other' }, /not the current goal/],
    ]
    const before = h.records(agent).length
    for (const [over, message] of bad) {
      const data = { ...judgement(goal), ...over }
      expect(() => h.root.goals.recordJudgement(agent, data)).toThrow(message)
      expect(codeOf(() => h.root.goals.recordJudgement(agent, data))).toBe('GOAL_INVALID_JUDGEMENT')
    }
    expect(h.records(agent)).toHaveLength(before)
    h.root.goals.pause(agent, goal)
    expect(() => h.root.goals.recordJudgement(agent, judgement(goal))).toThrow(/only an active goal's completion is judged/)
  })

  it.each([
    [{ verdict: 'not-met', accepted: true }, /a "not-met" judgement cannot be accepted/],
    [{ extra: 1 }, /exactly the keys/],
  ])('a forged judgement record in the log poisons the fold (%j)', async (over, message) => {
    const { agent, goal } = await setup()
    agent.session.append('goal/judgement', { ...judgement(goal), ...over } as GoalJudgementRecord)
    expect(h.root.goals.health(agent)).toMatchObject({ ok: false, error: { code: 'GOAL_CORRUPT_LOG', message: expect.stringMatching(message) } })
  })
})
