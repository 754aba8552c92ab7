import { afterEach, describe, expect, it, vi } from 'vitest'
import type { Agent } from '@goalkeeper/agent-loop'
import type { UserMessage } from '@goalkeeper/session'
import { renderGoalRoundPrompt } from '../src/index.ts'
import { untilGoalStops } from '@goalkeeper/test-kit'
import { admittedRounds, isGoalMessage, nextEvent, outcomes, recordsOf, setup, turnsBySource, type DriverSetup } from './helpers.ts'

let s: DriverSetup | undefined
afterEach(async () => {
  vi.restoreAllMocks()
  await s?.h.dispose()
  s = undefined
})

const admittedMessages = (s: DriverSetup) => recordsOf(s.h.records(s.agent), 'user/message') as UserMessage[]
const goalQueued = (s: DriverSetup) =>
  (recordsOf(s.h.records(s.agent), 'input/queued') as { message: UserMessage }[]).filter((q) => isGoalMessage(q.message)).length

/** Runs `act` once, right after the first goal-sourced message is queued (same tick as the send). */
function onFirstGoalQueued(s: DriverSetup, act: (message: UserMessage) => void) {
  let done = false
  s.h.root.on('agent/queued', (_agent: Agent, message: UserMessage) => {
    if (done || !isGoalMessage(message)) return
    done = true
    queueMicrotask(() => act(message))
  })
}

describe('goal rounds', () => {
  it('runs exactly rounds 1 and 2 under a cap of 2, then blocks round-limit', async () => {
    s = await setup()
    const { h, agent } = s
    h.scripted.push({ text: 'did part one' }, { text: 'did part two' })
    const created = h.root.goals.create(agent, { objective: 'Write NOTES.md', maxGoalRounds: 2 })
    const goal = await untilGoalStops(h.root, agent)
    expect(goal).toMatchObject({ phase: 'blocked', roundsStarted: 2, activation: 'disarmed', blockedReason: { code: 'round-limit' } })
    const records = h.records(agent)
    expect(admittedRounds(records)).toEqual(['1@1', '2@1'])
    expect(turnsBySource(records)).toEqual([['goal:1'], ['goal:2']])
    expect(outcomes(records)).toEqual(['completed', 'completed'])
    expect(h.scripted.requests).toHaveLength(2)
    expect(admittedMessages(s).map((m) => m.content)).toEqual([1, 2].map((round) => [{ type: 'text', text: renderGoalRoundPrompt(created, round) }]))
    // The file holds the same rounds once the loop has flushed.
    await h.root.sessions.flush(agent.session)
    expect(admittedRounds(h.readFile(agent))).toEqual(['1@1', '2@1'])
    expect(h.errors()).toEqual([])
  })

  it('stops after the round in which the model completes the goal with update_goal', async () => {
    s = await setup({ toolGoal: true })
    const { h, agent } = s
    const goal = h.root.goals.create(agent, { objective: 'Make the tests pass', maxGoalRounds: 5 })
    h.scripted.push(
      { text: 'first pass done, more to do' },
      () => ({ toolCalls: [{ name: 'update_goal', arguments: { goal_id: goal.id, revision: goal.revision, action: 'complete' } }] }),
      { text: 'Summary: everything passes.' },
    )
    const final = await untilGoalStops(h.root, agent)
    expect(final).toMatchObject({ phase: 'complete', roundsStarted: 2, activation: 'disarmed' })
    const records = h.records(agent)
    expect(admittedRounds(records)).toEqual(['1@1', '2@1'])
    expect(recordsOf(records, 'tool/result')).toMatchObject([{ ok: true }])
    expect(h.scripted.requests).toHaveLength(3)
    expect(outcomes(records)).toEqual(['completed', 'completed'])
    expect(h.errors()).toEqual([])
  })

  it('runs human input queued before a reservation first, and never counts it as a round', async () => {
    s = await setup()
    const { h, agent } = s
    h.scripted.push({ text: 'hello' }, { text: 'round one' }, { text: 'hello again' }, { text: 'round two' })
    h.root.goals.create(agent, { objective: 'Tidy the repo', maxGoalRounds: 2 })
    // Same tick as the create: the driver is still at its checkpoint, so this input is queued first.
    agent.send({ content: 'hi' })
    // Queued while round 1 runs: it goes before round 2.
    nextEvent(h.root, 'agent/turn-start', (_a: Agent, _t: number, messages: UserMessage[]) => messages.some(isGoalMessage))
      .then(() => agent.send({ content: 'and another thing' }))
    const goal = await untilGoalStops(h.root, agent)
    expect(turnsBySource(h.records(agent))).toEqual([['human'], ['goal:1'], ['human'], ['goal:2']])
    expect(goal).toMatchObject({ phase: 'blocked', roundsStarted: 2, blockedReason: { code: 'round-limit' } })
  })

  it('re-checks the goal after the checkpoint flush: a pause made during the flush reserves nothing', async () => {
    s = await setup()
    const { h, agent } = s
    const flush = vi.spyOn(h.root.sessions, 'flush')
    const created = h.root.goals.create(agent, { objective: 'Tidy the repo', maxGoalRounds: 2 })
    // Same tick: the driver is awaiting its checkpoint.
    expect(flush).toHaveBeenCalledTimes(1)
    h.root.goals.pause(agent, created)
    await untilGoalStops(h.root, agent)
    await flush.mock.results[0].value
    await agent.whenIdle()
    expect(goalQueued(s)).toBe(0)
    expect(h.root.goals.get(agent)).toMatchObject({ phase: 'paused', roundsStarted: 0 })
  })

  it('re-checks the goal after the checkpoint flush: an edit made during the flush is flushed too, and the one round runs on it', async () => {
    s = await setup()
    const { h, agent } = s
    h.scripted.push({ text: 'round one' })
    const flush = vi.spyOn(h.root.sessions, 'flush')
    const created = h.root.goals.create(agent, { objective: 'Tidy the repo', maxGoalRounds: 1 })
    const edited = h.root.goals.edit(agent, created, { objective: 'Tidy the repo and the docs' })
    const queued = nextEvent(h.root, 'agent/queued', (_a: Agent, m: UserMessage) => isGoalMessage(m))
    const [, message] = await queued
    // Both checkpoints came before the round was queued.
    expect(flush).toHaveBeenCalledTimes(2)
    expect(message.source).toEqual({ kind: 'goal', goalId: edited.id, revision: 2, round: 1 })
    await untilGoalStops(h.root, agent)
    expect(goalQueued(s)).toBe(1)
    expect(admittedRounds(h.records(agent))).toEqual(['1@2'])
  })

  it('makes a pending round stale when human input arrives during its admission; the human turn runs alone, the round follows', async () => {
    s = await setup()
    const { h, agent } = s
    h.scripted.push({ text: 'answered the human' }, { text: 'round one' })
    let sent = false
    h.root.on('agent/prompt-submit', async (a: Agent, submission, next) => {
      if (!sent && submission.messages.some(isGoalMessage)) {
        sent = true
        a.send({ content: 'wait, one question first' })
      }
      return next()
    })
    h.root.goals.create(agent, { objective: 'Refactor', maxGoalRounds: 1 })
    const goal = await untilGoalStops(h.root, agent)
    const records = h.records(agent)
    expect(turnsBySource(records)).toEqual([['human'], ['goal:1']])
    expect(admittedRounds(records)).toEqual(['1@1'])
    const queuedGoal = (recordsOf(records, 'input/queued') as { message: UserMessage }[]).filter((q) => isGoalMessage(q.message))
    expect(queuedGoal.map((q) => (q.message.source as { round: number }).round)).toEqual([1, 1])
    expect(recordsOf(records, 'input/rejected')).toEqual([expect.objectContaining({ messageId: queuedGoal[0].message.id })])
    expect(goal).toMatchObject({ roundsStarted: 1, blockedReason: { code: 'round-limit' } })
  })

  it('a copy of the round queued inside its own send is competing input: the round goes stale and is reserved again', async () => {
    s = await setup()
    const { h, agent } = s
    h.scripted.push({ text: 'round one' })
    let first: UserMessage | undefined
    let copy: UserMessage | undefined
    h.root.on('agent/queued', (a: Agent, message: UserMessage) => {
      if (first || !isGoalMessage(message)) return
      first = message
      copy = a.send({ content: message.content, source: message.source })
    })
    h.root.goals.create(agent, { objective: 'Refactor', maxGoalRounds: 1 })
    await untilGoalStops(h.root, agent)
    const records = h.records(agent)
    expect(admittedRounds(records)).toEqual(['1@1'])
    expect(admittedMessages(s).map((m) => m.id)).not.toContain(first!.id)
    expect((recordsOf(records, 'input/rejected') as { messageId: string }[]).map((r) => r.messageId).sort()).toEqual([first!.id, copy!.id].sort())
  })

  it('admits the human message of a mixed batch and drops the goal prompt', async () => {
    s = await setup()
    const { h, agent } = s
    h.scripted.push({ text: 'answered' }, { text: 'round one' })
    let dropped: UserMessage | undefined
    onFirstGoalQueued(s, (message) => {
      dropped = message
      agent.send({ content: 'me first' })
    })
    h.root.goals.create(agent, { objective: 'Refactor', maxGoalRounds: 1 })
    await untilGoalStops(h.root, agent)
    const records = h.records(agent)
    expect(turnsBySource(records)).toEqual([['human'], ['goal:1']])
    expect(recordsOf(records, 'input/rejected')).toEqual([{ messageId: dropped!.id, reason: 'dropped' }])
    expect(admittedMessages(s)[1].id).not.toBe(dropped!.id)
    expect(h.root.goals.get(agent)?.roundsStarted).toBe(1)
  })

  it('runs the round on the new revision when the goal is edited while its prompt is queued', async () => {
    s = await setup()
    const { h, agent } = s
    h.scripted.push({ text: 'round one' })
    const goal = h.root.goals.create(agent, { objective: 'Old objective', maxGoalRounds: 1 })
    let edited: ReturnType<typeof h.root.goals.edit> | undefined
    onFirstGoalQueued(s, () => {
      edited = h.root.goals.edit(agent, goal, { objective: 'New objective' })
    })
    await untilGoalStops(h.root, agent)
    expect(admittedRounds(h.records(agent))).toEqual(['1@2'])
    expect(admittedMessages(s)[0].content).toEqual([{ type: 'text', text: renderGoalRoundPrompt(edited!, 1) }])
    expect(h.scripted.requests).toHaveLength(1)
  })
})
