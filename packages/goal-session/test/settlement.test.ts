import { afterEach, describe, expect, it, vi } from 'vitest'
import type { Agent } from '@goalkeeper/agent-loop'
import type { ScriptResponse } from '@goalkeeper/model'
import type { SessionRecord, UserMessage } from '@goalkeeper/session'
import { hangingCall, untilGoalStops } from '@goalkeeper/test-kit'
import { DRIVER_BLOCK_CODES, settleRound, type RoundEnd } from '../src/index.ts'
import { admittedRounds, isGoalMessage, nextEvent, outcomes, recordsOf, setup, turnsBySource, type DriverSetup } from './helpers.ts'

let s: DriverSetup | undefined
afterEach(async () => {
  vi.restoreAllMocks()
  await s?.h.dispose()
  s = undefined
})

const goalOps = (records: readonly SessionRecord[]) => recordsOf(records, 'goal/change').map((data) => (data as { op: string }).op)

const roundStarted = (s: DriverSetup) =>
  nextEvent(s.h.root, 'agent/turn-start', (_a: Agent, _t: number, messages: UserMessage[]) => messages.some(isGoalMessage))

describe('settleRound, the settlement table', () => {
  const turn = (outcome: unknown): RoundEnd => ({ kind: 'turn', outcome: outcome as never })
  const at = { round: 2 }
  const moved = { round: 2, moved: 'the goal moved to revision 3' }

  it('maps each turn outcome to the table', () => {
    expect(settleRound(turn({ kind: 'completed' }), at)).toEqual({ kind: 'continue' })
    expect(settleRound(turn({ kind: 'aborted', cause: 'user' }), at)).toMatchObject({ kind: 'pause' })
    expect(settleRound(turn({ kind: 'preempted', cause: 'human message m1 arrived during goal round 2' }), at))
      .toEqual({ kind: 'preempted', why: 'round 2 ended early for human input (human message m1 arrived during goal round 2); rounds go on after it' })
    expect(settleRound(turn({ kind: 'error', code: 'RATE_LIMIT', message: 'm' }), at)).toMatchObject({ kind: 'block', reason: { code: DRIVER_BLOCK_CODES.usageLimited } })
    expect(settleRound(turn({ kind: 'error', code: 'QUOTA', message: 'm' }), at)).toMatchObject({ kind: 'block', reason: { code: 'usage-limited' } })
    expect(settleRound(turn({ kind: 'error', code: 'MAX_STEPS', message: 'm' }), at)).toMatchObject({ kind: 'continue', note: expect.stringContaining('step limit') })
    expect(settleRound(turn({ kind: 'error', code: 'INTERNAL', message: 'm' }), at)).toMatchObject({ kind: 'block', reason: { code: 'turn-error' } })
    expect(settleRound(turn({ kind: 'error', code: 'REFUSED', message: 'not this' }), at))
      .toEqual({ kind: 'block', reason: { code: DRIVER_BLOCK_CODES.refused, message: 'The model refused to work on the goal (REFUSED: not this).' } })
    expect(settleRound(turn({ kind: 'error', code: 'CONTEXT_OVERFLOW', message: 'm' }), at)).toMatchObject({ kind: 'block', reason: { code: 'context-overflow' } })
    expect(settleRound(turn({ kind: 'max-tokens' }), at)).toMatchObject({ kind: 'block', reason: { code: 'max-tokens' } })
    expect(settleRound(turn({ kind: 'disposed' }), at)).toMatchObject({ kind: 'disarm' })
    expect(settleRound(turn({ kind: 'interrupted' }), at)).toMatchObject({ kind: 'disarm' })
    expect(settleRound(turn({ kind: 'teleported' }), at)).toMatchObject({ kind: 'block', reason: { code: 'unknown-turn-outcome' } })
    expect(settleRound(turn(undefined), at)).toMatchObject({ kind: 'block', reason: { code: 'unknown-turn-outcome' } })
  })

  it('lets a goal that moved during the round stand, except where the outcome only disarms', () => {
    for (const outcome of [{ kind: 'completed' }, { kind: 'preempted', cause: 'c' }, { kind: 'aborted', cause: 'user' }, { kind: 'error', code: 'SERVER', message: 'm' }, { kind: 'max-tokens' }]) {
      expect(settleRound(turn(outcome), moved)).toMatchObject({ kind: 'stand' })
    }
    expect(settleRound(turn({ kind: 'disposed' }), moved)).toMatchObject({ kind: 'disarm' })
  })

  it('settles the rows that are not turn outcomes', () => {
    expect(settleRound({ kind: 'cancelled', reason: 'user' }, at)).toMatchObject({ kind: 'pause', why: expect.stringContaining('round 2 was cancelled (user)') })
    // A cancel always stops automatic work, even of a goal that moved.
    expect(settleRound({ kind: 'cancelled', reason: 'policy' }, moved)).toMatchObject({ kind: 'disarm' })
    expect(settleRound({ kind: 'refused', why: 'a later admission hook dropped it' }, at))
      .toEqual({ kind: 'block', reason: { code: 'prompt-rejected', message: 'Goal round 2 was not admitted: a later admission hook dropped it.' } })
    expect(settleRound({ kind: 'refused', why: 'x' }, moved)).toMatchObject({ kind: 'stand' })
    expect(settleRound({ kind: 'send-failed' }, at)).toEqual({ kind: 'block', reason: { code: 'queue-failed', message: 'Queueing goal round 2 failed.' } })
    expect(settleRound({ kind: 'send-failed' }, moved)).toMatchObject({ kind: 'stand' })
  })

  it('writes lower-kebab-case codes with a message', () => {
    for (const code of Object.values(DRIVER_BLOCK_CODES)) expect(code).toMatch(/^[a-z]+(-[a-z]+)*$/)
    const settled = settleRound(turn({ kind: 'error', code: 'SERVER', message: 'bad gateway' }), at)
    expect(settled.kind === 'block' && settled.reason.message).toContain('bad gateway')
  })
})

describe('settlement', () => {
  it('pauses the goal when its round is cancelled before admission; a resume re-arms it', async () => {
    s = await setup()
    const { h, agent } = s
    let cancelled: UserMessage | undefined
    h.root.on('agent/queued', (_a: Agent, message: UserMessage) => {
      if (cancelled || !isGoalMessage(message)) return
      cancelled = message
      queueMicrotask(() => agent.cancel('user'))
    })
    h.root.goals.create(agent, { objective: 'Ship it', maxGoalRounds: 1 })
    const paused = await untilGoalStops(h.root, agent)
    expect(paused).toMatchObject({ phase: 'paused', roundsStarted: 0, activation: 'disarmed' })
    expect(recordsOf(h.records(agent), 'input/cancelled')).toEqual([{ messageId: cancelled!.id, reason: 'user' }])
    expect(turnsBySource(h.records(agent))).toEqual([])

    h.scripted.push({ text: 'round one' })
    h.root.goals.resume(agent, paused!)
    const goal = await untilGoalStops(h.root, agent)
    expect(admittedRounds(h.records(agent))).toEqual(['1@3'])
    expect(goal).toMatchObject({ phase: 'blocked', blockedReason: { code: 'round-limit' } })
  })

  it('pauses the goal when the running round is cancelled, and starts no further round', async () => {
    s = await setup()
    const { h, agent } = s
    const call = hangingCall()
    h.scripted.push(call.step, { text: 'must not be used' })
    call.reached.then(() => agent.cancel('user'))
    h.root.goals.create(agent, { objective: 'Ship it', maxGoalRounds: 3 })
    const goal = await untilGoalStops(h.root, agent)
    expect(goal).toMatchObject({ phase: 'paused', roundsStarted: 1, activation: 'disarmed' })
    expect(outcomes(h.records(agent))).toEqual(['aborted'])
    expect(h.scripted.remaining).toBe(1)
    // Settled once, in agent/cancel-requested: the aborted outcome at idle adds nothing.
    expect(goalOps(h.records(agent))).toEqual(['create', 'pause'])
    expect(h.errors()).toEqual([])
  })

  it('does nothing more after a policy stop: the policy blocked the goal, then cancelled the round', async () => {
    s = await setup()
    const { h, agent } = s
    h.scripted.push({ text: 'same call again' }, { text: 'must not be used' })
    h.root.on('agent/step-end', (a: Agent, turn: number) => {
      if (!h.root.goals.blockRound(a, turn, { code: 'repeated-tool-call', message: 'read_file 5 times in a row' })) return
      a.cancel('policy', { turn })
    })
    h.root.goals.create(agent, { objective: 'Ship it', maxGoalRounds: 3 })
    const goal = await untilGoalStops(h.root, agent)
    expect(goal).toMatchObject({ phase: 'blocked', roundsStarted: 1, activation: 'disarmed', blockedReason: { code: 'repeated-tool-call' } })
    expect(goalOps(h.records(agent))).toEqual(['create', 'block'])
    expect(outcomes(h.records(agent))).toEqual(['aborted'])
    expect(h.scripted.remaining).toBe(1)
    expect(h.errors()).toEqual([])
  })

  it('only disarms when an unrelated human turn is cancelled', async () => {
    s = await setup()
    const { h, agent } = s
    h.scripted.push({ kind: 'hang' })
    agent.send({ content: 'long task' })
    await nextEvent(h.root, 'agent/turn-start')
    h.root.goals.create(agent, { objective: 'Ship it', maxGoalRounds: 3 })
    agent.cancel('user')
    await agent.whenIdle()
    expect(h.root.goals.get(agent)).toMatchObject({ phase: 'active', roundsStarted: 0, activation: 'disarmed' })
    const queued = recordsOf(h.records(agent), 'input/queued') as { message: UserMessage }[]
    expect(queued.filter((q) => isGoalMessage(q.message))).toEqual([])
  })

  it('disarms when pausing after a cancel fails', async () => {
    s = await setup()
    const { h, agent } = s
    h.scripted.push({ kind: 'hang' })
    vi.spyOn(h.root.goals, 'pause').mockImplementation(() => {
      throw new Error('injected pause failure')
    })
    roundStarted(s).then(() => agent.cancel('user'))
    h.root.goals.create(agent, { objective: 'Ship it', maxGoalRounds: 3 })
    const goal = await untilGoalStops(h.root, agent)
    expect(goal).toMatchObject({ phase: 'active', roundsStarted: 1, activation: 'disarmed' })
    expect(h.errors().some((line) => line.includes('injected pause failure'))).toBe(true)
  })

  it.each<[string, ScriptResponse, string]>([
    ['RATE_LIMIT', { kind: 'error', code: 'RATE_LIMIT', message: 'slow down' }, 'usage-limited'],
    ['QUOTA', { kind: 'error', code: 'QUOTA', message: 'insufficient balance' }, 'usage-limited'],
    ['SERVER', { kind: 'error', code: 'SERVER', message: 'bad gateway' }, 'turn-error'],
    ['REFUSED', { kind: 'error', code: 'REFUSED', message: 'I cannot help with that', text: 'The model refused to answer: I cannot help with that' }, 'refused'],
    ['max-tokens', { kind: 'max-tokens', text: 'cut off' }, 'max-tokens'],
  ])('blocks the goal when a round ends with %s', async (_name, response, code) => {
    s = await setup()
    const { h, agent } = s
    h.scripted.push({ text: 'round one' }, response, { text: 'must not be used' })
    h.root.goals.create(agent, { objective: 'Ship it', maxGoalRounds: 5 })
    const goal = await untilGoalStops(h.root, agent)
    expect(goal).toMatchObject({ phase: 'blocked', roundsStarted: 2, activation: 'disarmed', blockedReason: { code } })
    expect(h.scripted.remaining).toBe(1)
  })

  it('blocks the goal context-overflow when a round is still refused as too long after the summary and the fallback', async () => {
    s = await setup()
    const { h, agent } = s
    const overflow: ScriptResponse = { kind: 'error', code: 'CONTEXT_OVERFLOW', message: 'too long' }
    // The first refusal compacts with a summary (the third answer), the second with the fallback (no model call), the third blocks.
    h.scripted.push({ text: 'round one' }, overflow, { text: 'summary of round one' }, overflow, overflow, { text: 'must not be used' })
    h.root.goals.create(agent, { objective: 'Ship it', maxGoalRounds: 5 })
    const goal = await untilGoalStops(h.root, agent)
    expect(goal).toMatchObject({ phase: 'blocked', roundsStarted: 2, activation: 'disarmed', blockedReason: { code: 'context-overflow' } })
    expect(goal?.blockedReason?.message).toMatch(/^The model refused goal round 2 as too long even after the history was compacted \(CONTEXT_OVERFLOW: the model refused the request as too long 3 times; compacted \(summary\) .*, then compacted \(fallback\) .*Last refusal: too long\)\. Set the provider's contextWindow/)
    expect(h.scripted.remaining).toBe(1)
  })

  it('blocks the goal usage-limited when the summary call of a compaction hits a usage limit: no retry, no loop', async () => {
    s = await setup()
    const { h, agent } = s
    const overflow: ScriptResponse = { kind: 'error', code: 'CONTEXT_OVERFLOW', message: 'too long' }
    // Round 2 is refused as too long; the summary call (the third answer) meets the provider's limit.
    h.scripted.push({ text: 'round one' }, overflow, { kind: 'error', code: 'QUOTA', message: 'insufficient balance' }, { text: 'must not be used' })
    h.root.goals.create(agent, { objective: 'Ship it', maxGoalRounds: 5 })
    const goal = await untilGoalStops(h.root, agent)
    expect(goal).toMatchObject({ phase: 'blocked', roundsStarted: 2, activation: 'disarmed', blockedReason: { code: 'usage-limited' } })
    expect(goal?.blockedReason?.message).toContain('QUOTA: insufficient balance')
    expect(h.scripted.remaining).toBe(1)
    expect(recordsOf(h.records(agent), 'context/compacted')).toEqual([])
  })

  it('disarms without running a round when the checkpoint flush fails', async () => {
    s = await setup()
    const { h, agent } = s
    const flush = vi.spyOn(h.root.sessions, 'flush').mockRejectedValueOnce(new Error('injected: disk full'))
    h.root.goals.create(agent, { objective: 'Ship it', maxGoalRounds: 3 })
    const goal = await untilGoalStops(h.root, agent)
    expect(goal).toMatchObject({ phase: 'active', roundsStarted: 0, activation: 'disarmed' })
    expect(flush).toHaveBeenCalledTimes(1)
    expect(recordsOf(h.records(agent), 'input/queued')).toEqual([])
    expect(h.errors().some((line) => line.includes('checkpoint flush'))).toBe(true)
  })

  it('disarms when the flush after a human turn fails: no round follows', async () => {
    s = await setup()
    const { h, agent } = s
    h.scripted.push({ text: 'hello' }, { text: 'must not be used' })
    const real = h.root.sessions.flush.bind(h.root.sessions)
    vi.spyOn(h.root.sessions, 'flush').mockImplementation(async (session) => {
      if (session.records.at(-1)?.type === 'turn/end') throw new Error('injected: disk full')
      return real(session)
    })
    h.root.goals.create(agent, { objective: 'Ship it', maxGoalRounds: 3 })
    // Queued while the driver awaits its checkpoint: the human turn runs first.
    agent.send({ content: 'hi' })
    const goal = await untilGoalStops(h.root, agent)
    expect(goal).toMatchObject({ phase: 'active', roundsStarted: 0, activation: 'disarmed' })
    expect(turnsBySource(h.records(agent))).toEqual([['human']])
    const queued = recordsOf(h.records(agent), 'input/queued') as { message: UserMessage }[]
    expect(queued.filter((q) => isGoalMessage(q.message))).toEqual([])
    expect(h.scripted.remaining).toBe(1)
  })

  it('disarms, phase unchanged, when the flush after a round fails', async () => {
    s = await setup()
    const { h, agent } = s
    h.scripted.push({ text: 'round one' }, { text: 'must not be used' })
    const errors = h.events(['agent/error'])
    const real = h.root.sessions.flush.bind(h.root.sessions)
    vi.spyOn(h.root.sessions, 'flush').mockImplementation(async (session) => {
      // Fail only the loop's flush after the round's turn/end.
      if (session.records.at(-1)?.type === 'turn/end') throw new Error('injected: disk full')
      return real(session)
    })
    h.root.goals.create(agent, { objective: 'Ship it', maxGoalRounds: 3 })
    const goal = await untilGoalStops(h.root, agent)
    expect(goal).toMatchObject({ phase: 'active', roundsStarted: 1, activation: 'disarmed' })
    expect(errors.map((e) => (e.args[2] as { code: string }).code)).toEqual(['FLUSH_FAILED'])
    expect(h.scripted.remaining).toBe(1)
  })

  it('blocks queue-failed when sending the reservation throws', async () => {
    s = await setup()
    const { h, agent } = s
    const send = agent.send.bind(agent)
    vi.spyOn(agent, 'send').mockImplementation((input) => {
      if (input.source?.kind === 'goal') throw new Error('injected: inbox unavailable')
      return send(input)
    })
    h.root.goals.create(agent, { objective: 'Ship it', maxGoalRounds: 3 })
    const goal = await untilGoalStops(h.root, agent)
    expect(goal).toMatchObject({ phase: 'blocked', roundsStarted: 0, blockedReason: { code: 'queue-failed' } })
    expect(h.errors().some((line) => line.includes('injected: inbox unavailable'))).toBe(true)
  })

  it('does not block queue-failed a goal that was disarmed before sending the reservation threw', async () => {
    s = await setup()
    const { h, agent } = s
    const send = agent.send.bind(agent)
    vi.spyOn(agent, 'send').mockImplementation((input) => {
      if (input.source?.kind !== 'goal') return send(input)
      h.root.goals.disarm(agent)
      throw new Error('injected: inbox unavailable')
    })
    h.root.goals.create(agent, { objective: 'Ship it', maxGoalRounds: 3 })
    const goal = await untilGoalStops(h.root, agent)
    expect(goal).toMatchObject({ phase: 'active', revision: 1, roundsStarted: 0, activation: 'disarmed' })
    expect(h.records(agent).filter((r) => r.type === 'goal/change').map((r) => (r.data as { op: string }).op)).toEqual(['create'])
  })

  it('lets a mutation made during the round win over the round outcome', async () => {
    s = await setup()
    const { h, agent } = s
    // The model errors, but the goal was edited during the round: no block, the next round runs on the new revision.
    h.scripted.push(() => {
      h.root.goals.edit(agent, h.root.goals.get(agent)!, { maxGoalRounds: 2 })
      return { kind: 'error', code: 'SERVER', message: 'bad gateway' }
    }, { text: 'round two' })
    h.root.goals.create(agent, { objective: 'Ship it', maxGoalRounds: 3 })
    const goal = await untilGoalStops(h.root, agent)
    expect(admittedRounds(h.records(agent))).toEqual(['1@1', '2@2'])
    expect(goal).toMatchObject({ phase: 'blocked', blockedReason: { code: 'round-limit' } })
  })
})
