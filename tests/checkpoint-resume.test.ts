// A long goal whose history is compacted many times writes checkpoints; resuming it reads the log from the
// last one only, and the agent, the goal and the next model request are exactly what a whole replay gives.
// Composed from cordis.yml by the real loader; only the model is scripted. On JSONL files and on PostgreSQL.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { COMPACTION_INSTRUCTION, replayHistory } from '@goalkeeper/agent-loop'
import { foldGoal } from '@goalkeeper/goal'
import type { ScriptedProvider } from '@goalkeeper/model'
import { checkpointPart, isRecordOf } from '@goalkeeper/session'
import { testDatabase } from '@goalkeeper/test-kit'
import { composeFromYml, type Composition, type ProjectPaths } from './compose.ts'
import { longGoalScript, longGoalYml, runLongGoal } from './long-goal.ts'

const ROUNDS = 24

const db = testDatabase()

function composition(paths: ProjectPaths, store: 'files' | 'postgres', logVersion: 1 | 2) {
  // A checkpoint every 12 records as well as at each compaction, so both reasons occur.
  // A database needs a signing key its machines share (a test key here).
  const key = store === 'postgres' ? `, key: '${'a1'.repeat(32)}'` : ''
  return longGoalYml(paths, { session: `{ checkpointEvery: 12, logVersion: ${logVersion}${key} }`, ...(store === 'postgres' && { database: db.url }) })
}

// On log version 2 (one mac per batch, what new sessions get) and 1 (a mac on every line).
const CASES = [['files', 2], ['postgres', 2], ['files', 1], ['postgres', 1]] as const
describe.each(CASES)('resuming a long goal from its last checkpoint (%s, log version %i)', (store, logVersion) => {
  let app: Composition
  beforeEach(async () => { app = await composeFromYml((paths) => composition(paths, store, logVersion), { 'script.mjs': longGoalScript(ROUNDS, ROUNDS * 2 + 50) }) })
  afterEach(() => app.dispose())

  it('reads only the tail, and restores the goal, its spend, the history and the next request exactly', async () => {
    const agent = await runLongGoal(app)
    const id = agent.id
    const whole = await app.readLog(agent)
    expect(whole[0]).toMatchObject({ type: 'session/header', data: { version: logVersion } })
    const checkpoints = whole.filter((record) => isRecordOf(record, 'session/checkpoint'))
    const reasons = new Set(checkpoints.map((record) => (record.data as { reason: string }).reason))
    expect([...reasons].sort()).toEqual(['compaction', 'interval'])
    const last = checkpoints.at(-1)!
    expect(checkpointPart(last, 'goal')).toBeDefined()
    expect(checkpointPart(last, 'agent-loop')).toBeDefined()
    const goalBefore = foldGoal(whole)!
    expect(goalBefore).toMatchObject({ phase: 'blocked', roundsStarted: ROUNDS })
    expect(goalBefore.spent?.calls).toBe(ROUNDS)
    await agent.dispose()
    expect(app.root.sessions.get(id)).toBeUndefined()
    // The index the store keeps (beside the log, or on its row) places the last checkpoint.
    const entry = JSON.parse((await app.root.sessionStore.readCheckpointIndex!(id))!)
    expect(entry.seq).toBe(last.seq)

    const resumed = await app.root.agents.resume(id, { model: 'scripted' })
    const { session } = resumed
    expect(session.firstSeq).toBe(last.seq)
    const { mac: _, ...bare } = last as typeof last & { mac: string }
    expect(session.records[0]).toEqual(bare)
    expect(session.records.length).toBe(whole.length - last.seq)
    expect(session.header).toEqual(whole[0].data)
    // The folds from the tail give what the whole log gives.
    expect(foldGoal(session.records)).toEqual(goalBefore)
    expect(app.root.goals.get(resumed)).toMatchObject({ id: goalBefore.id, phase: 'blocked', roundsStarted: ROUNDS, spent: goalBefore.spent })
    expect(JSON.stringify(replayHistory(session.records))).toBe(JSON.stringify(replayHistory(whole)))

    // The next request, built from the restored history, is byte for byte the whole log's.
    const provider = app.root.models.get('scripted') as ScriptedProvider
    const before = provider.requests.length
    const message = resumed.send({ content: 'What did you observe last?' })
    await resumed.whenIdle()
    const request = provider.requests.slice(before).find((r) => r.system !== COMPACTION_INSTRUCTION)!
    const after = await app.readLog(resumed)
    expect(after.some((record) => isRecordOf(record, 'user/message') && record.data.id === message.id)).toBe(true)
    // The whole log on disk replays to that request plus its answer (a compaction before it included).
    expect(JSON.stringify(replayHistory(after).slice(0, -1)) === JSON.stringify(request.messages)).toBe(true)
    expect(after.map((record) => record.seq)).toEqual(after.map((_, index) => index))
    expect(app.errors).toEqual([])
  }, 120_000)
})
