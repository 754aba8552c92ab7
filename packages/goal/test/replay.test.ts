import fs from 'node:fs'
import { readFile } from 'node:fs/promises'
import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import { type Agent, replayHistory } from '@goalkeeper/agent-loop'
import { foldGoal, type GoalState } from '../src/index.ts'
import { createHarness } from '@goalkeeper/test-kit'
import { codeOf, goalHarness, type Harness } from './helpers.ts'

let h: Harness
afterEach(() => h?.dispose())

const SEED = 724_2031
const persisted = (goal: GoalState | undefined) => {
  if (!goal) return undefined
  const { activation: _, ...rest } = goal
  return rest
}

type Op =
  | { kind: 'create'; objective: string; max?: number }
  | { kind: 'edit'; objective?: string; max?: number; stale: boolean }
  | { kind: 'pause' | 'resume' | 'complete' | 'clear'; stale: boolean }
  | { kind: 'block'; code: string; stale: boolean }
  | { kind: 'disarm' }
  | { kind: 'round'; offset: number; staleRevision: boolean }
  | { kind: 'budget'; tokens?: number; costUsd?: number; stale: boolean }
  | { kind: 'usage'; tokens: number; costUsd: number | null; offset: number }

/** True one time in five: most steps should be legal so that long histories build up. */
const rarely = fc.integer({ min: 0, max: 4 }).map((n) => n === 0)
const offset = fc.oneof({ arbitrary: fc.constant(0), weight: 4 }, { arbitrary: fc.constantFrom(-1, 1), weight: 1 })
const text = fc.oneof(fc.constantFrom('Ship it', '  padded  ', '', 'line one\nline two', '<goal_round>'), fc.string({ minLength: 1, maxLength: 20 }))
const op: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('create' as const), objective: text, max: fc.option(fc.integer({ min: -1, max: 4 }), { nil: undefined }) }), weight: 2 },
  fc.record({ kind: fc.constant('edit' as const), objective: fc.option(text, { nil: undefined }), max: fc.option(fc.integer({ min: 0, max: 5 }), { nil: undefined }), stale: rarely }),
  fc.record({ kind: fc.constantFrom('pause' as const, 'resume' as const, 'complete' as const, 'clear' as const), stale: rarely }),
  fc.record({ kind: fc.constant('block' as const), code: fc.constantFrom('round-limit', 'Bad Code', 'needs-help'), stale: rarely }),
  fc.record({ kind: fc.constant('disarm' as const) }),
  { arbitrary: fc.record({ kind: fc.constant('round' as const), offset, staleRevision: rarely }), weight: 3 },
  fc.record({ kind: fc.constant('budget' as const), tokens: fc.option(fc.integer({ min: -5, max: 400 }), { nil: undefined }), costUsd: fc.option(fc.double({ min: 0, max: 2, noNaN: true }), { nil: undefined }), stale: rarely }),
  { arbitrary: fc.record({ kind: fc.constant('usage' as const), tokens: fc.integer({ min: 0, max: 200 }), costUsd: fc.option(fc.double({ min: 0, max: 0.5, noNaN: true }), { nil: null, freq: 8 }), offset }), weight: 2 },
)

async function run(agent: Agent, step: Op): Promise<void> {
  const goals = h.root.goals
  const live = goals.get(agent)
  const ref = live ? { id: live.id, revision: live.revision - (('stale' in step && step.stale) ? 1 : 0) } : { id: 'missing', revision: 1 }
  const attempt = (mutate: () => unknown) => {
    const code = codeOf(mutate)
    // Refusals are typed domain errors; anything else is a bug.
    if (code !== undefined) expect(code).toMatch(/^GOAL_/)
  }
  switch (step.kind) {
    case 'create': return attempt(() => goals.create(agent, { objective: step.objective, maxGoalRounds: step.max }))
    case 'edit': return attempt(() => goals.edit(agent, ref, { objective: step.objective, maxGoalRounds: step.max }))
    case 'block': return attempt(() => goals.block(agent, ref, { code: step.code, message: 'stuck' }))
    case 'disarm': return goals.disarm(agent)
    case 'budget': return attempt(() => goals.edit(agent, ref, { budgets: { tokens: step.tokens, costUsd: step.costUsd } }))
    case 'usage': {
      if (!live) return
      return attempt(() => goals.recordUsage(agent, { goalId: live.id, round: live.roundsStarted + step.offset, turn: 1, step: 1, tokens: step.tokens, costUsd: step.costUsd, activeTimeMs: 1000 }))
    }
    case 'round': {
      if (!live) return
      h.scripted.push({ text: 'progress' })
      agent.send({ content: 'round', source: { kind: 'goal', goalId: live.id, revision: live.revision - (step.staleRevision ? 1 : 0), round: live.roundsStarted + 1 + step.offset } })
      return agent.whenIdle()
    }
    default: return attempt(() => goals[step.kind](agent, ref))
  }
}

describe('replay', () => {
  it(`reproduces the live goal after random mutation sequences (fast-check seed ${SEED})`, async () => {
    h = await goalHarness()
    console.log(`fast-check seed ${SEED}`)
    const seen = { changes: 0, rounds: 0, dropped: 0, usage: 0, budgeted: 0 }
    await fc.assert(fc.asyncProperty(fc.array(op, { minLength: 20, maxLength: 80 }), async (ops) => {
      const agent = await h.createAgent()
      try {
        for (const step of ops) {
          await run(agent, step)
          expect(persisted(h.root.goals.get(agent))).toEqual(foldGoal(h.records(agent)))
        }
        await h.root.sessions.flush(agent.session)
        const records = h.records(agent)
        seen.changes += records.filter((r) => r.type === 'goal/change').length
        seen.rounds += records.filter((r) => r.type === 'user/message').length
        seen.dropped += records.filter((r) => r.type === 'input/rejected').length
        seen.usage += records.filter((r) => r.type === 'goal/usage').length
        seen.budgeted += records.filter((r) => r.type === 'goal/change' && (r.data as { goal?: { budgets?: unknown } }).goal?.budgets).length
        const live = h.root.goals.get(agent)
        expect(foldGoal(h.readFile(agent))).toEqual(persisted(live))
        expect(fs.readFileSync(agent.session.file, 'utf8')).not.toMatch(/activation|armed/)
      } finally {
        await agent.dispose()
        h.scripted.reset()
      }
    }), { seed: SEED, numRuns: 40 })
    console.log('replay property coverage', seen)
    // The sequences must exercise admitted and dropped rounds and real mutations, not only refusals.
    expect(seen.changes).toBeGreaterThan(150)
    expect(seen.rounds).toBeGreaterThan(50)
    expect(seen.dropped).toBeGreaterThan(50)
    expect(seen.usage).toBeGreaterThan(30)
    expect(seen.budgeted).toBeGreaterThan(30)
  })

  it('a resumed agent sees the same goal, disarmed; rounds carry over', async () => {
    h = await goalHarness()
    const agent = await h.createAgent()
    const goal = h.root.goals.create(agent, { objective: 'Keep going', maxGoalRounds: 5 })
    h.scripted.push({ text: 'step one' })
    agent.send({ content: 'round', source: { kind: 'goal', goalId: goal.id, revision: 1, round: 1 } })
    await agent.whenIdle()
    const live = h.root.goals.get(agent)!
    expect(live).toMatchObject({ roundsStarted: 1, activation: 'armed' })
    await agent.dispose()
    await h.root.sessions.close(agent.session)
    const resumed = await h.root.agents.resume(agent.id)
    expect(h.root.goals.get(resumed)).toEqual({ ...live, activation: 'disarmed' })
    expect(h.root.goals.resume(resumed, { id: goal.id, revision: 1 })).toMatchObject({ revision: 2, activation: 'armed', roundsStarted: 1 })
  })

  it('a fork inherits the goal and its rounds and starts disarmed; activation never reaches a file', async () => {
    h = await goalHarness()
    const agent = await h.createAgent()
    const goal = h.root.goals.create(agent, { objective: 'Fork me' })
    h.scripted.push({ text: 'one' }, { text: 'two' })
    for (const round of [1, 2]) {
      agent.send({ content: 'round', source: { kind: 'goal', goalId: goal.id, revision: 1, round } })
      await agent.whenIdle()
    }
    const last = h.records(agent).length - 1
    const fork = await h.root.agents.fork(agent.id, last)
    expect(h.root.goals.get(fork)).toMatchObject({ id: goal.id, roundsStarted: 2, revision: 1, phase: 'active', activation: 'disarmed' })
    expect(h.root.goals.get(agent)).toMatchObject({ activation: 'armed' })
    // The fork's own history is independent of the parent's.
    h.root.goals.pause(fork, { id: goal.id, revision: 1 })
    expect(h.root.goals.get(agent)).toMatchObject({ phase: 'active', revision: 1 })
    for (const session of [agent.session, fork.session]) {
      await h.root.sessions.flush(session)
      expect(fs.readFileSync(session.file, 'utf8')).not.toMatch(/activation|armed/)
    }
  })

  it('a fork of a long session starts at its last checkpoint before the seq and resumes the goal and the history the source had there', async () => {
    h = await createHarness({ workspaceTools: false, sessions: { checkpointEvery: 3 } })
    await h.load(await import('../src/index.ts'), {})
    const agent = await h.createAgent()
    const goal = h.root.goals.create(agent, { objective: 'Keep forking' })
    h.scripted.push({ text: 'one' }, { text: 'two' }, { text: 'three' })
    for (const round of [1, 2, 3]) {
      agent.send({ content: `round ${round}`, source: { kind: 'goal', goalId: goal.id, revision: 1, round } })
      await agent.whenIdle()
    }
    await h.root.sessions.flush(agent.session)
    const records = (await readFile(agent.session.file, 'utf8')).trim().split('\n').map((line) => JSON.parse(line))
    const checkpoints = records.filter((record) => record.type === 'session/checkpoint').map((record) => record.seq)
    expect(checkpoints.length).toBeGreaterThan(1)
    const last = records.length - 1
    const fork = await h.root.agents.fork(agent.id, last)
    // Started at the source's last checkpoint, with its seqs: the goal and history fold from that checkpoint.
    expect(fork.session.header.parent).toEqual({ id: agent.id, seq: last, from: checkpoints.at(-1) })
    expect(fork.session.firstSeq).toBe(checkpoints.at(-1))
    expect(h.root.goals.get(fork)).toEqual({ ...foldGoal(records), activation: 'disarmed' })
    expect(h.root.goals.get(fork)).toMatchObject({ roundsStarted: 3 })
    expect(replayHistory(fork.session.records, fork.session.firstSeq)).toEqual(replayHistory(records))
    // Closed and resumed (read whole, or from its index), the fork folds the same again.
    await fork.dispose()
    await h.root.sessions.close(fork.session)
    const resumed = await h.root.agents.resume(fork.id)
    expect(h.root.goals.get(resumed)).toEqual({ ...foldGoal(records), activation: 'disarmed' })
    expect(replayHistory(resumed.session.records, resumed.session.firstSeq)).toEqual(replayHistory(records))
  })

  it('reloading the goal plugin leaves every goal disarmed', async () => {
    h = await createHarness({ workspaceTools: false })
    const plugin = await import('../src/index.ts')
    const fiber = await h.load(plugin, {})
    const agent = await h.createAgent()
    const goal = h.root.goals.create(agent, { objective: 'Survive reload' })
    expect(h.root.goals.get(agent)?.activation).toBe('armed')
    await fiber.dispose()
    await h.load(plugin, {})
    expect(h.root.goals.get(agent)).toMatchObject({ id: goal.id, phase: 'active', activation: 'disarmed' })
  })
})

describe('a corrupt goal log', () => {
  it('is reported by health, naming the seq, every time; get answers no goal and every mutation throws', async () => {
    h = await goalHarness()
    const agent = await h.createAgent()
    const goal = h.root.goals.create(agent, { objective: 'A' })
    expect(h.root.goals.health(agent)).toEqual({ ok: true })
    const bad = agent.session.append<string>('goal/change', { op: 'pause', goal: { ...persisted(goal), phase: 'paused', revision: 5 } })
    for (let i = 0; i < 2; i++) {
      const health = h.root.goals.health(agent)
      expect(health).toMatchObject({ ok: false, error: { code: 'GOAL_CORRUPT_LOG', seq: bad.seq } })
      expect(!health.ok && health.error.message).toContain(`seq ${bad.seq}`)
      expect(h.root.goals.get(agent)).toBeUndefined()
    }
    expect(codeOf(() => h.root.goals.pause(agent, { id: goal.id, revision: 1 }))).toBe('GOAL_CORRUPT_LOG')
    expect(codeOf(() => h.root.goals.create(agent, { objective: 'B' }))).toBe('GOAL_CORRUPT_LOG')
    expect(h.records(agent).filter((r) => r.type === 'goal/change')).toHaveLength(2)
    // Input still flows: a human message is admitted, and goal-sourced ones are dropped.
    h.scripted.push({ text: 'hi' })
    agent.send({ content: 'round', source: { kind: 'goal', goalId: goal.id, revision: 1, round: 1 } })
    agent.send({ content: 'hello' })
    await agent.whenIdle()
    expect(h.records(agent).filter((r) => r.type === 'user/message').map((r) => (r.data as any).source.kind)).toEqual(['human'])
  })
})
