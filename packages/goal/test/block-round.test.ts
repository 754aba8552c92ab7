import { afterEach, describe, expect, it } from 'vitest'
import type { Agent } from '@goalkeeper/agent-loop'
import type { GoalState } from '../src/index.ts'
import { codeOf, goalHarness, type Harness } from './helpers.ts'

let h: Harness
afterEach(() => h?.dispose())

const reason = { code: 'repeated-tool-call', message: 'read_file was called 5 times in a row' }

async function setup(): Promise<{ agent: Agent; goal: GoalState }> {
  h = await goalHarness()
  const agent = await h.createAgent()
  return { agent, goal: h.root.goals.create(agent, { objective: 'Block me', maxGoalRounds: 5 }) }
}

/** Runs one turn to its end: the next legal round of the live goal, or a human turn. */
async function runTurn(agent: Agent, kind: 'round' | 'human' = 'round'): Promise<void> {
  const goal = h.root.goals.get(agent)!
  h.scripted.push({ text: 'worked' })
  agent.send(kind === 'human' ? { content: 'human turn' } : {
    content: 'goal round',
    source: { kind: 'goal', goalId: goal.id, revision: goal.revision, round: goal.roundsStarted + 1 },
  })
  await agent.whenIdle()
}

/** Calls `act` while the model is asked in the next turn, that is with the turn open, and returns what it returned. */
function during<T>(act: (turn: number) => T): Promise<T> {
  return new Promise((resolve) => {
    h.scripted.push(() => {
      resolve(act(h.root.agents.list()[0].turn!))
      return { text: 'ok' }
    })
  })
}

const goalChanges = (agent: Agent) => h.records(agent).filter((r) => r.type === 'goal/change').map((r) => (r.data as { op: string }).op)

describe('ctx.goals.roundOf', () => {
  it('names the round of each goal turn from the log, and nothing for other turns', async () => {
    const { agent, goal } = await setup()
    await runTurn(agent)
    await runTurn(agent, 'human')
    await runTurn(agent)
    expect(h.root.goals.roundOf(agent, 1)).toEqual({ goalId: goal.id, revision: 1, round: 1 })
    expect(h.root.goals.roundOf(agent, 2)).toBeUndefined()
    // A past round answers with its own identity, not the later round's.
    expect(h.root.goals.roundOf(agent, 3)).toEqual({ goalId: goal.id, revision: 1, round: 2 })
    expect(h.root.goals.roundOf(agent, 4)).toBeUndefined()
    expect(h.root.goals.roundOf({ id: 'no-such-agent' }, 1)).toBeUndefined()
  })

  it('knows the round of the open turn', async () => {
    const { agent, goal } = await setup()
    const seen = during((turn) => h.root.goals.roundOf(agent, turn))
    agent.send({ content: 'goal round', source: { kind: 'goal', goalId: goal.id, revision: 1, round: 1 } })
    expect(await seen).toEqual({ goalId: goal.id, revision: 1, round: 1 })
    await agent.whenIdle()
  })
})

describe('ctx.goals.blockRound', () => {
  it('blocks the live goal from inside its round and returns the new state', async () => {
    const { agent, goal } = await setup()
    const events = h.events(['goal/changed', 'goal/activation'])
    const blocked = during((turn) => h.root.goals.blockRound(agent, turn, reason))
    agent.send({ content: 'goal round', source: { kind: 'goal', goalId: goal.id, revision: 1, round: 1 } })
    expect(await blocked).toMatchObject({ id: goal.id, phase: 'blocked', revision: 2, roundsStarted: 1, blockedReason: reason, activation: 'disarmed' })
    await agent.whenIdle()
    expect(h.root.goals.get(agent)).toMatchObject({ phase: 'blocked', blockedReason: reason })
    expect(goalChanges(agent)).toEqual(['create', 'block'])
    expect(events.map((e) => e.name)).toEqual(['goal/changed', 'goal/activation'])
    // A reply without tool calls ends the turn normally.
    expect(h.records(agent).filter((r) => r.type === 'turn/end').map((r) => (r.data as any).outcome)).toEqual([{ kind: 'completed' }])
  })

  it('ends the round it blocks: no further model call, and no further tool call of the step runs', async () => {
    const { agent, goal } = await setup()
    const ran: string[] = []
    h.root.tools.register({
      name: 'note', description: 'keeps a note', parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      execute: (args: { text: string }) => { ran.push(args.text); return 'noted' },
    })
    // A policy in the style of a third-party plugin: the second note of a round blocks the goal and is denied.
    let notes = 0
    h.root.on('tool/before-call', async (review, next) => {
      if (review.name !== 'note' || ++notes < 2) return next()
      h.root.goals.blockRound(review.call.agent, review.call.turn, { code: 'note-limit', message: 'one note per round' }, { by: 'note-limit' })
      return { kind: 'deny', by: 'note-limit', reason: 'one note per round' }
    })
    const note = (text: string) => ({ name: 'note', arguments: { text } })
    h.scripted.push({ toolCalls: [note('a'), note('b'), note('c')] }, { toolCalls: [note('d')] }, { text: 'never asked' })
    agent.send({ content: 'goal round', source: { kind: 'goal', goalId: goal.id, revision: 1, round: 1 } })
    await agent.whenIdle()
    expect(h.scripted.requests).toHaveLength(1)
    expect(ran).toEqual(['a'])
    expect(h.root.goals.get(agent)).toMatchObject({ phase: 'blocked', blockedReason: { code: 'note-limit' } })
    const results = h.records(agent).filter((r) => r.type === 'tool/result').map((r) => r.data as { ok: boolean; denied?: { by: string; reason: string } })
    expect(results.map((r) => [r.ok, r.denied?.by])).toEqual([[true, undefined], [false, 'note-limit'], [false, 'note-limit']])
    expect(results[2].denied?.reason).toBe('the goal is blocked (note-limit: one note per round); no tool call runs in this round any more.')
    expect(h.records(agent).filter((r) => r.type === 'turn/end').map((r) => (r.data as any).outcome)).toEqual([{ kind: 'aborted', cause: 'policy' }])
  })

  it('writes nothing and returns undefined when the turn is not a round of the live, active goal', async () => {
    const { agent, goal } = await setup()
    await runTurn(agent)
    await runTurn(agent, 'human')
    expect(h.root.goals.blockRound(agent, 2, reason)).toBeUndefined() // a human turn
    expect(h.root.goals.blockRound(agent, 9, reason)).toBeUndefined() // no such turn
    expect(h.root.goals.blockRound({ id: 'no-such-agent' }, 1, reason)).toBeUndefined()

    const edited = h.root.goals.edit(agent, goal, { objective: 'Block me, revised' })
    expect(h.root.goals.blockRound(agent, 1, reason)).toBeUndefined() // the goal moved to revision 2
    await runTurn(agent) // turn 3: round 2 of revision 2
    h.root.goals.pause(agent, edited)
    expect(h.root.goals.blockRound(agent, 3, reason)).toBeUndefined() // paused
    const complete = h.root.goals.complete(agent, h.root.goals.get(agent)!)
    h.root.goals.clear(agent, complete)
    const next = h.root.goals.create(agent, { objective: 'Another goal' })
    expect(h.root.goals.blockRound(agent, 3, reason)).toBeUndefined() // another goal id
    expect(goalChanges(agent)).toEqual(['create', 'edit', 'pause', 'complete', 'clear', 'create'])
    expect(h.root.goals.get(agent)).toMatchObject({ id: next.id, phase: 'active' })
  })

  it('a round whose turn has ended still blocks while the goal has not moved', async () => {
    const { agent, goal } = await setup()
    await runTurn(agent)
    expect(h.root.goals.blockRound(agent, 1, reason)).toMatchObject({ id: goal.id, phase: 'blocked', revision: 2 })
  })

  it('clips an over-long message instead of losing the block', async () => {
    const { agent } = await setup()
    await runTurn(agent)
    const state = h.root.goals.blockRound(agent, 1, { code: 'mistake-limit', message: `  ${'x'.repeat(1998)}😀tail  ` })!
    expect(state.blockedReason!.message).toBe(`${'x'.repeat(1998)}…`)
    expect(h.root.goals.get(agent)!.blockedReason).toEqual(state.blockedReason)
  })

  it('keeps a message of exactly the limit, trimmed, as it is', async () => {
    const { agent } = await setup()
    await runTurn(agent)
    const message = 'y'.repeat(2000)
    expect(h.root.goals.blockRound(agent, 1, { code: 'mistake-limit', message: ` ${message}\n` })!.blockedReason!.message).toBe(message)
  })

  it('refuses a malformed reason with a typed error, round or not, and writes nothing', async () => {
    const { agent } = await setup()
    await runTurn(agent)
    await runTurn(agent, 'human')
    for (const turn of [1, 2]) {
      expect(codeOf(() => h.root.goals.blockRound(agent, turn, { code: 'Not Kebab', message: 'x' }))).toBe('GOAL_INVALID_BLOCK_REASON')
      expect(codeOf(() => h.root.goals.blockRound(agent, turn, { code: 'stop', message: '   ' }))).toBe('GOAL_INVALID_BLOCK_REASON')
    }
    expect(goalChanges(agent)).toEqual(['create'])
  })

  it('returns undefined on a corrupt goal log instead of throwing', async () => {
    const { agent, goal } = await setup()
    await runTurn(agent)
    agent.session.append<string>('goal/change', { op: 'pause', goal: { id: goal.id } })
    expect(h.root.goals.health(agent)).toMatchObject({ ok: false, error: { code: 'GOAL_CORRUPT_LOG' } })
    expect(h.root.goals.blockRound(agent, 1, reason)).toBeUndefined()
    expect(goalChanges(agent)).toEqual(['create', 'pause'])
  })
})
