import { afterEach, describe, expect, it } from 'vitest'
import type { Agent, PromptDecision, Submission } from '@goalkeeper/agent-loop'
import type { UserMessage } from '@goalkeeper/session'
import { untilGoalStops } from '@goalkeeper/test-kit'
import { admittedRounds, isGoalMessage, recordsOf, setup, turnsBySource, type DriverSetup } from './helpers.ts'

let s: DriverSetup | undefined
afterEach(async () => {
  await s?.h.dispose()
  s = undefined
})

/** Far above the driver's limit: a plugin that misbehaves this often means the driver did not stop it. */
const RUNAWAY = 12

const goalQueued = (s: DriverSetup) =>
  (recordsOf(s.h.records(s.agent), 'input/queued') as { message: UserMessage }[]).filter((q) => isGoalMessage(q.message)).length

describe('no progress, no endless re-reserving', () => {
  it('stops when every reservation is dropped because a hook edits the goal during admission', async () => {
    s = await setup()
    const { h, agent } = s
    let edits = 0
    h.root.on('agent/prompt-submit', async (a: Agent, submission: Submission, next: () => Promise<PromptDecision>) => {
      if (submission.messages.some(isGoalMessage)) {
        const goal = h.root.goals.get(a)!
        // The pause only ends a runaway test; the driver must have stopped long before.
        if (++edits < RUNAWAY) h.root.goals.edit(a, goal, { objective: `Ship it (touched ${edits})` })
        else h.root.goals.pause(a, goal)
      }
      return next()
    })
    h.root.goals.create(agent, { objective: 'Ship it', maxGoalRounds: 5 })
    const goal = await untilGoalStops(h.root, agent)
    expect(goal).toMatchObject({ phase: 'active', roundsStarted: 0, activation: 'disarmed' })
    expect(edits).toBe(3)
    expect(goalQueued(s)).toBe(3)
    expect(h.scripted.requests).toHaveLength(0)
    expect(h.errors().some((line) => /dropped 3 times in a row/.test(line))).toBe(true)
    // A resume is a fresh start: the same allowance again, not one more try.
    h.root.goals.resume(agent, goal!)
    expect(await untilGoalStops(h.root, agent)).toMatchObject({ phase: 'active', activation: 'disarmed' })
    expect(edits).toBe(6)
  })

  it('stops when a plugin answers every queued round with input of its own, so each round goes stale', async () => {
    s = await setup()
    const { h, agent } = s
    let sent = 0
    h.root.on('agent/queued', (a: Agent, message: UserMessage) => {
      if (!isGoalMessage(message) || ++sent > RUNAWAY) return
      a.send({ content: `reminder ${sent}`, source: { kind: 'plugin', name: 'reminder' } })
    })
    h.scripted.push(...Array.from({ length: RUNAWAY }, (_, i) => ({ text: `noted ${i + 1}` })))
    h.root.goals.create(agent, { objective: 'Ship it', maxGoalRounds: 5 })
    const goal = await untilGoalStops(h.root, agent)
    expect(goal).toMatchObject({ phase: 'active', roundsStarted: 0, activation: 'disarmed' })
    expect(sent).toBe(3)
    expect(turnsBySource(h.records(agent))).toEqual([['plugin'], ['plugin'], ['plugin']])
    expect(admittedRounds(h.records(agent))).toEqual([])
  })

  it('human turns in between are progress: a human who keeps talking does not stop the goal', async () => {
    s = await setup()
    const { h, agent } = s
    let sent = 0
    // Each reservation goes stale to a human message, four times, more than the driver's limit.
    h.root.on('agent/queued', (a: Agent, message: UserMessage) => {
      if (!isGoalMessage(message) || ++sent > 4) return
      queueMicrotask(() => a.send({ content: `one more thing (${sent})` }))
    })
    h.scripted.push(...Array.from({ length: 4 }, (_, i) => ({ text: `answer ${i + 1}` })), { text: 'round one' })
    h.root.goals.create(agent, { objective: 'Ship it', maxGoalRounds: 1 })
    const goal = await untilGoalStops(h.root, agent)
    expect(turnsBySource(h.records(agent))).toEqual([['human'], ['human'], ['human'], ['human'], ['goal:1']])
    expect(goal).toMatchObject({ phase: 'blocked', roundsStarted: 1, blockedReason: { code: 'round-limit' } })
  })
})
