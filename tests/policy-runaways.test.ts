// Runaway classes under the default policies, composed from cordis.yml by the real loader on the real agent loop,
// goal, round driver and workspace tools (history compaction included); only the model is scripted. Each run is
// stopped within its bound, counted in wasted calls.
import { afterEach, describe, expect, it } from 'vitest'
import type { Agent } from '@goalkeeper/agent-loop'
import { COMPACTION_INSTRUCTION } from '@goalkeeper/agent-loop'
import type { GoalChange } from '@goalkeeper/goal'
import type { ModelRequest, ScriptedProvider, ScriptResponse, ScriptToolCall } from '@goalkeeper/model'
import { isRecordOf, type SessionRecord } from '@goalkeeper/session'
import { outcomes } from '@goalkeeper/test-kit'
import { composeFromYml, defaultPolicies, type Composition } from './compose.ts'

let app: Composition | undefined
afterEach(() => app?.dispose())

const scripted = () => app!.root.models.get('scripted') as ScriptedProvider
const tool = (name: string, args: Record<string, unknown>): ScriptToolCall => ({ name, arguments: args })
const step = (text: string, ...calls: ScriptToolCall[]): ScriptResponse => ({ text, toolCalls: calls })

function settled(agent: Agent): Promise<GoalChange> {
  return new Promise((resolve) => {
    const off = app!.root.on('goal/changed', (changed, change) => {
      if (changed.id === agent.id && change.goal && change.goal.phase !== 'active') { off(); resolve(change) }
    })
  })
}

/** The tool calls of a log with their results, in order. */
function callsOf(records: readonly SessionRecord[]) {
  const results = new Map(records.filter((r) => isRecordOf(r, 'tool/result')).map((r) => [r.data.callId, r.data]))
  return records.filter((r) => isRecordOf(r, 'tool/call')).map((r) => {
    const result = results.get(r.data.callId)!
    return { name: r.data.name, arguments: r.data.arguments, ok: result.ok, content: result.content }
  })
}

/** Calls that redid an earlier call exactly (arguments and result): how many times each call was already made before it. */
function priorMakes(records: readonly SessionRecord[]): number[] {
  const made = new Map<string, number>()
  return callsOf(records).map((c) => {
    const key = JSON.stringify([c.name, c.arguments, c.ok, c.content])
    const before = made.get(key) ?? 0
    made.set(key, before + 1)
    return before
  })
}

describe('a block of calls redone after each compaction', () => {
  const FILES = 10
  const marker = (i: number) => `<<contents of f${i}>>`

  it('is stopped at its second repetition, the guards keeping their memory through the compactions', async () => {
    // Each file is about 700 tokens: the ten never fit under the compaction threshold together.
    const files = Object.fromEntries(Array.from({ length: FILES }, (_, i) => [`workspace/f${i}.txt`, `${marker(i)}\n${`line ${i} `.repeat(350)}\n`]))
    app = await composeFromYml((paths) => defaultPolicies(paths, { scripted: { contextWindow: 8000 } }), files)
    const agent = await app.root.agents.create({ model: 'scripted', cwd: app.workspace })
    // The model reads the ten files in order, then checks its history: when a result is no longer in view
    // (compaction summarised it away) it rebuilds its plan and reads all ten again, with the same calls and results.
    let pass: number[] = []
    const model = (request: ModelRequest): ScriptResponse => {
      if (request.system === COMPACTION_INSTRUCTION) return { text: 'The files of the workspace were being read one by one.' }
      if (pass.length === FILES) {
        const seen = JSON.stringify(request.messages)
        if (pass.every((i) => seen.includes(marker(i)))) return { text: 'All ten files read.' }
        pass = []
      }
      pass.push(pass.length)
      return step('Reading the next file.', tool('read_file', { path: `f${pass.length - 1}.txt` }))
    }
    scripted().reset(Array.from({ length: 200 }, () => model))
    const done = settled(agent)
    app.root.goals.create(agent, { objective: 'Read every file of the workspace and report' })
    const change = await done
    await agent.whenIdle()

    expect(change.goal!.phase).toBe('blocked')
    expect(change.goal!.blockedReason!.code).toBe('repeated-tool-call')
    expect(change.goal!.blockedReason!.message).toMatch(/^Calls already made in this goal are being made again with the same results: each of the last 4 calls/)
    const records = await app.readLog(agent)
    const before = priorMakes(records)
    // Every file was read once, then again after a compaction (fair: its result was out of view) ...
    expect(before.filter((n) => n === 0)).toHaveLength(FILES)
    expect(before.filter((n) => n === 1)).toHaveLength(FILES)
    // ... and the second redo was stopped four calls in.
    expect(before.filter((n) => n >= 2)).toHaveLength(4)
    const compactions = records.filter((r) => isRecordOf(r, 'context/compacted'))
    expect(compactions.length).toBeGreaterThanOrEqual(2)
    // Compactions came between the first reads and the stop: the guard's memory went through them.
    const firstCompaction = records.indexOf(compactions[0])
    expect(records.findIndex((r) => isRecordOf(r, 'tool/call'))).toBeLessThan(firstCompaction)
    expect(outcomes(records)).toEqual([{ kind: 'aborted', cause: 'policy' }])
    expect(app.errors).toEqual([])
  }, 60_000)
})
