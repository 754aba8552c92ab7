import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { Agent } from '@goalkeeper/agent-loop'
import type { ModelRequest, ScriptResponse } from '@goalkeeper/model'
import type { SessionRecord, TurnOutcome, UserMessage } from '@goalkeeper/session'
import { call, done, tools, untilGoalStops } from '@goalkeeper/test-kit'
import { admittedRounds, isGoalMessage, nextEvent, outcomes, recordsOf, setup, turnsBySource, type DriverSetup } from './helpers.ts'

let s: DriverSetup | undefined
afterEach(async () => {
  await s?.h.dispose()
  s = undefined
})

const readA = (): ScriptResponse => tools(call('read_file', { path: 'a.txt' }))

/** The text of the last user message a model request carries. */
const lastUserText = (request: ModelRequest) => {
  const users = request.messages.filter((m) => m.role === 'user')
  return JSON.stringify(users[users.length - 1])
}

const turnEnds = (records: readonly SessionRecord[]) => recordsOf(records, 'turn/end') as { turn: number; outcome: TurnOutcome }[]

describe('a human message during a goal round', () => {
  it('ends the round at the next step boundary, runs the human turn next, and goes on with rounds after it', async () => {
    s = await setup()
    const { h, agent } = s
    await fs.writeFile(path.join(h.workspace, 'a.txt'), 'alpha\n')
    let human: UserMessage | undefined
    h.scripted.push(
      // Round 1, first model call: the person types while the model is answering.
      () => {
        human = agent.send({ content: 'wait, look at b.txt first' })
        return readA()
      },
      // Round 1 must not get a second model call; this reply is the human turn's.
      done('human turn answered'),
      done('round two done'),
    )
    h.root.goals.create(agent, { objective: 'Ship it', maxGoalRounds: 2 })
    const goal = await untilGoalStops(h.root, agent)

    expect(turnsBySource(h.records(agent))).toEqual([['goal:1'], ['human'], ['goal:2']])
    expect(outcomes(h.records(agent))).toEqual(['preempted', 'completed', 'completed'])
    expect(h.scripted.requests).toHaveLength(3)
    expect(lastUserText(h.scripted.requests[1])).toContain('look at b.txt first')
    // The step under way finished: its tool call ran and has its result.
    expect(recordsOf(h.records(agent), 'tool/result')).toMatchObject([{ turn: 1, ok: true, content: expect.stringContaining('alpha') }])
    // The round used its number and did not block the goal; the cap then ends it as usual.
    expect(goal).toMatchObject({ phase: 'blocked', roundsStarted: 2, blockedReason: { code: 'round-limit' } })
    const file = h.readFile(agent)
    expect(turnEnds(file)[0]).toEqual({ turn: 1, outcome: { kind: 'preempted', cause: `human message ${human!.id} arrived during goal round 1` } })
  })

  it('yields before the first model call when the message is queued between admission and the turn', async () => {
    s = await setup()
    const { h, agent } = s
    let human: UserMessage | undefined
    h.root.on('agent/admit', (_a: Agent, message: UserMessage) => {
      if (isGoalMessage(message) && !human) human = agent.send({ content: 'hold on' })
    })
    h.scripted.push(done('human answered'), done('round two'))
    h.root.goals.create(agent, { objective: 'Ship it', maxGoalRounds: 2 })
    await untilGoalStops(h.root, agent)
    expect(turnsBySource(h.records(agent))).toEqual([['goal:1'], ['human'], ['goal:2']])
    expect(outcomes(h.records(agent))).toEqual(['preempted', 'completed', 'completed'])
    expect(recordsOf(h.records(agent), 'step/start')).toHaveLength(2)
    expect(h.scripted.requests).toHaveLength(2)
  })

  it('does not resume rounds after the human turn when that turn changed the goal', async () => {
    s = await setup({ toolGoal: true })
    const { h, agent } = s
    h.scripted.push(
      () => {
        agent.send({ content: 'pause the goal please' })
        return tools(call('get_goal'))
      },
      (request) => {
        const goal = h.root.goals.get(agent)!
        expect(lastUserText(request)).toContain('pause the goal please')
        return tools(call('update_goal', { goal_id: goal.id, revision: goal.revision, action: 'pause' }))
      },
      done('paused it'),
    )
    h.root.goals.create(agent, { objective: 'Ship it', maxGoalRounds: 5 })
    const goal = await untilGoalStops(h.root, agent)
    expect(goal).toMatchObject({ phase: 'paused', roundsStarted: 1 })
    expect(turnsBySource(h.records(agent))).toEqual([['goal:1'], ['human']])
    expect(outcomes(h.records(agent))).toEqual(['preempted', 'completed'])
    expect(admittedRounds(h.records(agent))).toEqual(['1@1'])
  })

  it('leaves a round alone when the input is not human, and a human message during a human turn waits for the next batch', async () => {
    s = await setup()
    const { h, agent } = s
    h.scripted.push(
      () => {
        agent.send({ content: 'a reminder', source: { kind: 'plugin', name: 'reminder' } })
        return tools(call('list_dir', { path: '.' }))
      },
      done('round one done'),
      done('reminder seen'),
    )
    h.root.goals.create(agent, { objective: 'Ship it', maxGoalRounds: 1 })
    await untilGoalStops(h.root, agent)
    expect(turnsBySource(h.records(agent))).toEqual([['goal:1'], ['plugin']])
    expect(outcomes(h.records(agent)).slice(0, 1)).toEqual(['completed'])

    // Today's convention for a human turn: the second message waits, the turn is not cut short.
    h.scripted.push(
      () => {
        agent.send({ content: 'second thought' })
        return tools(call('list_dir', { path: '.' }))
      },
      done('first answered'),
      done('second answered'),
    )
    const turnEnd = nextEvent(h.root, 'agent/turn-end', (_a: Agent, turn: number) => turn === 4)
    agent.send({ content: 'first' })
    await turnEnd
    await agent.whenIdle()
    expect(turnsBySource(h.records(agent)).slice(2)).toEqual([['human'], ['human']])
    expect(outcomes(h.records(agent)).slice(2)).toEqual(['completed', 'completed'])
  })
})
