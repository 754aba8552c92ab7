// A goal of many rounds in one process, with checkpoints every few records and the smallest maxSessionBytes:
// its session lets go of what precedes each checkpoint, so it writes several times that limit without
// filling up, holds a bounded number of records throughout, and resuming it gives what a whole replay gives.
// Composed from cordis.yml by the real loader; only the model is scripted.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { replayHistory } from '@goalkeeper/agent-loop'
import { foldGoal } from '@goalkeeper/goal'
import { isRecordOf } from '@goalkeeper/session'
import { composeFromYml, type Composition, type ProjectPaths } from './compose.ts'
import { longGoalScript, longGoalYml, runLongGoal } from './long-goal.ts'

const ROUNDS = 60
const LIMIT = 1 << 16
const EVERY = 12

const composition = (paths: ProjectPaths, logVersion: 1 | 2) => longGoalYml(paths, { session: `{ checkpointEvery: ${EVERY}, maxSessionBytes: ${LIMIT}, logVersion: ${logVersion} }` })

// On log version 2 (one mac per batch, what new sessions get) and 1 (a mac on every line).
describe.each([2, 1] as const)('a goal that runs past maxSessionBytes many times over (log version %i)', (logVersion) => {
  let app: Composition
  beforeEach(async () => { app = await composeFromYml((paths) => composition(paths, logVersion), { 'script.mjs': longGoalScript(ROUNDS, ROUNDS * 3 + 50) }) })
  afterEach(() => app.dispose())

  it('is never full, holds a bounded number of records, and resumes to the state of a whole replay', async () => {
    let most = 0
    let firstSeq = 0
    const agent = await runLongGoal(app, (agent) => app.root.on('session/event', (session) => {
      if (session.id !== agent.id) return
      most = Math.max(most, session.records.length)
      firstSeq = session.firstSeq
    }))
    const id = agent.id
    const live = app.root.goals.get(agent)
    await app.root.sessions.flush(agent.session)
    const whole = await app.readLog(agent)
    expect(whole[0]).toMatchObject({ type: 'session/header', data: { version: logVersion } })
    const size = whole.reduce((sum, record) => sum + JSON.stringify(record).length + 1, 0)
    expect(size).toBeGreaterThan(4 * LIMIT)
    expect(whole.some((record) => isRecordOf(record, 'session/full'))).toBe(false)
    expect(firstSeq).toBeGreaterThan(0)
    // At most the records between two checkpoints and the turn that passed the later one (a round's turn
    // is about a dozen records): bounded, however many rounds ran.
    expect(most).toBeLessThan(EVERY + 40)
    expect(whole.length).toBeGreaterThan(8 * most)
    const goalBefore = foldGoal(whole)!
    expect(goalBefore).toMatchObject({ phase: 'blocked', roundsStarted: ROUNDS })
    expect(goalBefore.spent?.calls).toBe(ROUNDS)
    // The live folds, kept from checkpoints on, say what the whole log says.
    expect(live).toMatchObject({ id: goalBefore.id, phase: 'blocked', roundsStarted: ROUNDS, spent: goalBefore.spent })
    await agent.dispose()

    const resumed = await app.root.agents.resume(id, { model: 'scripted' })
    expect(resumed.session.firstSeq).toBeGreaterThan(0)
    expect(foldGoal(resumed.session.records)).toEqual(goalBefore)
    expect(app.root.goals.get(resumed)).toMatchObject({ id: goalBefore.id, phase: 'blocked', roundsStarted: ROUNDS, spent: goalBefore.spent })
    expect(JSON.stringify(replayHistory(resumed.session.records))).toBe(JSON.stringify(replayHistory(whole)))
    expect(app.errors).toEqual([])
  }, 180_000)
})
