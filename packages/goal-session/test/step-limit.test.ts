import { afterEach, describe, expect, it } from 'vitest'
import { existsSync } from 'node:fs'
import path from 'node:path'
import type { ScriptStep } from '@goalkeeper/model'
import { turnOutcome } from '@goalkeeper/session'
import { settleRound, STEP_LIMIT_CODE } from '../src/index.ts'
import { untilGoalStops } from '@goalkeeper/test-kit'
import { admittedRounds, outcomes, setup, type DriverSetup } from './helpers.ts'

let s: DriverSetup | undefined
afterEach(async () => {
  await s?.h.dispose()
  s = undefined
})

/** One step of work: a file written per step, so what ran can be checked on disk. */
const writeStep = (n: number): ScriptStep => ({ toolCalls: [{ name: 'write_file', arguments: { path: `work/${n}.txt`, content: `step ${n}` } }] })

describe('a round that reaches the step limit', () => {
  it('settles as its own outcome: the round counts, the next one goes on', () => {
    const end = { kind: 'turn', outcome: { kind: 'error', code: STEP_LIMIT_CODE, message: 'the turn reached the limit of 64 steps' } } as const
    expect(settleRound(end, { round: 2 })).toEqual({ kind: 'continue', note: expect.stringContaining('round 2 reached the step limit') })
    // A goal that moved during the round still wins.
    expect(settleRound(end, { round: 2, moved: 'the goal moved to revision 3' })).toMatchObject({ kind: 'stand' })
  })

  it('a model that works 70 steps at the default limit of 64: round 1 stops at the cap, round 2 finishes and completes the goal', async () => {
    s = await setup({ toolGoal: true })
    const { h, agent } = s
    const goal = h.root.goals.create(agent, { objective: 'Write the 70 work files', maxGoalRounds: 3 })
    const steps = Array.from({ length: 70 }, (_, i) => writeStep(i + 1))
    h.scripted.push(
      ...steps,
      { toolCalls: [{ name: 'update_goal', arguments: { goal_id: goal.id, revision: goal.revision, action: 'complete' } }] },
      { text: 'All 70 files are written.' },
    )
    const final = await untilGoalStops(h.root, agent)
    expect(final).toMatchObject({ phase: 'complete', roundsStarted: 2, activation: 'disarmed' })
    const records = h.records(agent)
    expect(admittedRounds(records)).toEqual(['1@1', '2@1'])
    expect(outcomes(records)).toEqual(['error', 'completed'])
    expect(turnOutcome(records, 1)).toMatchObject({ kind: 'error', code: 'MAX_STEPS', message: expect.stringContaining('limit of 64 steps') })
    expect(turnOutcome(records, 1)).toMatchObject({ message: expect.stringMatching(/maxSteps.*cordis\.yml.*--max-steps N/) })
    // 64 model calls in round 1, 6 more writes, the completion and the summary in round 2.
    expect(h.scripted.requests).toHaveLength(72)
    expect(h.scripted.remaining).toBe(0)
    for (const n of [1, 64, 65, 70]) expect(existsSync(path.join(h.workspace, 'work', `${n}.txt`))).toBe(true)
    expect(h.logs.some((line) => line.level === 'info' && line.text.includes('round 1 reached the step limit'))).toBe(true)
  })

  it('step-limit rounds still use up the rounds: the cap applies', async () => {
    s = await setup()
    const { h, agent } = s
    h.root.goals.create(agent, { objective: 'Never done', maxGoalRounds: 2 })
    h.scripted.push(...Array.from({ length: 200 }, (_, i) => writeStep(i + 1)))
    const final = await untilGoalStops(h.root, agent)
    expect(final).toMatchObject({ phase: 'blocked', roundsStarted: 2, blockedReason: { code: 'round-limit' } })
    expect(outcomes(h.records(agent))).toEqual(['error', 'error'])
    expect(h.scripted.requests).toHaveLength(128)
  })
})
