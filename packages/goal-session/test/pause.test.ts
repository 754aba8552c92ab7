import { afterEach, describe, expect, it } from 'vitest'
import type { Agent, ToolCallInfo } from '@goalkeeper/agent-loop'
import type { ModelRequest, ScriptResponse } from '@goalkeeper/model'
import type { SessionRecord, TurnOutcome } from '@goalkeeper/session'
import { call, done, tools, untilGoalStops } from '@goalkeeper/test-kit'
import { outcomes, recordsOf, setup, turnsBySource, type DriverSetup } from './helpers.ts'

let s: DriverSetup | undefined
afterEach(async () => {
  await s?.h.dispose()
  s = undefined
})

const goalOps = (records: readonly SessionRecord[]) => recordsOf(records, 'goal/change').map((data) => (data as { op: string }).op)

describe('a pause of the goal while its round runs', () => {
  it('cancels the round at once: a model call under way is aborted and none follows', async () => {
    s = await setup()
    const { h, agent } = s
    h.scripted.push(
      // The model is still answering when the person pauses; it would never answer by itself.
      (_request: ModelRequest) => {
        setImmediate(() => h.root.goals.pause(agent, h.root.goals.get(agent)!))
        return new Promise<ScriptResponse>(() => {})
      },
      done('never requested'),
    )
    h.root.goals.create(agent, { objective: 'Ship it', maxGoalRounds: 5 })
    const goal = await untilGoalStops(h.root, agent)
    expect(goal).toMatchObject({ phase: 'paused', roundsStarted: 1, activation: 'disarmed' })
    expect(h.scripted.requests).toHaveLength(1)
    expect(recordsOf(h.readFile(agent), 'turn/end')).toEqual([{ turn: 1, outcome: { kind: 'aborted', cause: 'user' } satisfies TurnOutcome }])
    expect(goalOps(h.records(agent))).toEqual(['create', 'pause'])
  })

  it('during a tool call stops the turn there and keeps human input queued before it', async () => {
    s = await setup()
    const { h, agent } = s
    h.root.on('agent/tool-start', (a: Agent, info: ToolCallInfo) => {
      if (info.step !== 1) return
      a.send({ content: 'a question' })
      h.root.goals.pause(a, h.root.goals.get(a)!)
    })
    h.scripted.push(tools(call('list_dir', { path: '.' })), done('the answer'), done('never requested'))
    h.root.goals.create(agent, { objective: 'Ship it', maxGoalRounds: 5 })
    const goal = await untilGoalStops(h.root, agent)
    await agent.whenIdle()
    expect(goal).toMatchObject({ phase: 'paused', roundsStarted: 1 })
    expect(turnsBySource(h.records(agent))).toEqual([['goal:1'], ['human']])
    expect(outcomes(h.records(agent))).toEqual(['aborted', 'completed'])
    expect(recordsOf(h.records(agent), 'tool/result')).toMatchObject([{ ok: false, error: { code: 'ABORTED' } }])
    expect(h.scripted.requests).toHaveLength(2)
  })

  it('leaves the round alone when the goal is edited, not paused', async () => {
    s = await setup()
    const { h, agent } = s
    h.root.on('agent/tool-start', (a: Agent) => {
      const goal = h.root.goals.get(a)!
      if (goal.revision === 1) h.root.goals.edit(a, goal, { objective: 'Ship it well' })
    })
    h.scripted.push(tools(call('list_dir', { path: '.' })), done('round one done'))
    h.root.goals.create(agent, { objective: 'Ship it', maxGoalRounds: 1 })
    await untilGoalStops(h.root, agent)
    expect(outcomes(h.records(agent))).toEqual(['completed'])
    expect(h.scripted.requests).toHaveLength(2)
  })
})
