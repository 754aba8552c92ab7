// Turn-end hooks inside goal rounds run by the real round driver: a continue stays in the round and is
// bounded, and a round whose goal was completed is not sent on.
import { afterEach, describe, expect, it } from 'vitest'
import * as goal from '@goalkeeper/goal'
import * as goalSession from '@goalkeeper/goal-session'
import { call, createHarness, done, outcomes, pluginMessages, tools, untilGoalStops, type Harness } from '@goalkeeper/test-kit'
import * as toolGoal from '@goalkeeper/tool-goal'
import * as hooks from '../src/index.ts'
import { hookRuns } from './scripts.ts'

let h: Harness | undefined
afterEach(async () => {
  await h?.dispose()
  h = undefined
})

describe('turn-end hooks in goal rounds', () => {
  it('go on inside the round up to continueLimit; a completed goal\'s wrap-up ends as it would without hooks', async () => {
    h = await createHarness()
    await h.load(goal)
    await h.load(toolGoal)
    await h.load(hooks, { hooks: [{ event: 'Stop', command: `cat >/dev/null; echo "not verified yet" >&2; exit 2` }], continueLimit: 1 })
    await h.load(goalSession)
    const agent = await h.createAgent()
    const created = h.root.goals.create(agent, { objective: 'Make the tests pass', maxGoalRounds: 5 })
    const stopped = untilGoalStops(h.root, agent)
    h.scripted.push(
      done('part one'),
      done('part one, checked'),
      () => tools(call('update_goal', { goal_id: created.id, revision: created.revision, action: 'complete' })),
      done('Summary: the tests pass.'),
    )
    const final = await stopped
    expect(final).toMatchObject({ phase: 'complete', roundsStarted: 2 })
    expect(h.scripted.requests).toHaveLength(4)
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'completed' }, { kind: 'completed' }])
    expect(pluginMessages(h.records(agent), 'hooks')).toEqual([expect.stringMatching(/\(1 of at most 1\)\.\nStop hook ".*": not verified yet$/)])
    // Round 1: a continue, then the limit; round 2's wrap-up: asked, and not sent on.
    expect(hookRuns(h.records(agent)).map((r) => [r.turn, r.outcome])).toEqual([[1, 'blocked'], [1, 'blocked'], [2, 'blocked']])
  })
})
