// Randomized legitimate runs under the default policies, composed from cordis.yml by the real loader on the
// real agent loop, goal, round driver and workspace tools; only the model is scripted. None may be stopped.
import fc from 'fast-check'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { GoalChange } from '@goalkeeper/goal'
import type { ScriptedProvider, ScriptResponse, ScriptToolCall } from '@goalkeeper/model'
import { isRecordOf, type SessionRecord } from '@goalkeeper/session'
import { outcomes } from '@goalkeeper/test-kit'
import { composeFromYml, defaultPolicies, type Composition } from './compose.ts'

let app: Composition
beforeEach(async () => {
  const seeds = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`workspace/seed-${i}.txt`, `seed file ${i}\n`]))
  // Files that differ only in their names' digits and have the same contents: reading them is no repeat.
  const fixtures = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`workspace/fixture${i + 1}.txt`, 'fixture\n']))
  // Documents with contents of their own, for runs that read something new in every round.
  const docs = Object.fromEntries(Array.from({ length: 120 }, (_, i) => [`workspace/doc-${i}.md`, `# Document ${i}\nabout topic ${i * 13 % 120}\n`]))
  app = await composeFromYml(defaultPolicies, { ...seeds, ...fixtures, ...docs })
})
afterEach(() => app.dispose())

const scripted = () => app.root.models.get('scripted') as ScriptedProvider
const POLICIES = ['loop-guard', 'mistake-limit', 'no-progress']
/** What a policy plugin put into the session (a hint or a stop message). */
const fromPolicies = (records: readonly SessionRecord[]) =>
  records.filter((r) => isRecordOf(r, 'user/message') && r.data.source.kind === 'plugin' && POLICIES.includes(r.data.source.name))

const SEED = 1_205_2024

/** Legitimate work whose results keep changing, as the steps one action takes (one tool call per model call unless said). */
type Action =
  | { kind: 'read' } | { kind: 'write' } | { kind: 'edit' } | { kind: 'reread' } | { kind: 'parallel'; count: number }
  | { kind: 'poll'; times: number } | { kind: 'pair'; times: number } | { kind: 'fix'; attempts: number } | { kind: 'fixtures'; count: number }
  /** Reads `count` new documents, then ends the round with a summary (the next round goes on). */
  | { kind: 'survey'; count: number }
  /** Tries `misses` file names that do not exist, saying the same thing each time, then reads one that does. */
  | { kind: 'explore'; misses: number }

const action: fc.Arbitrary<Action> = fc.oneof(
  fc.constantFrom<Action>({ kind: 'read' }, { kind: 'write' }, { kind: 'edit' }, { kind: 'reread' }),
  fc.integer({ min: 2, max: 3 }).map((count): Action => ({ kind: 'parallel', count })),
  fc.integer({ min: 2, max: 12 }).map((times): Action => ({ kind: 'poll', times })),
  fc.integer({ min: 2, max: 6 }).map((times): Action => ({ kind: 'pair', times })),
  fc.integer({ min: 1, max: 4 }).map((attempts): Action => ({ kind: 'fix', attempts })),
  fc.integer({ min: 2, max: 6 }).map((count): Action => ({ kind: 'fixtures', count })),
  fc.integer({ min: 1, max: 5 }).map((count): Action => ({ kind: 'survey', count })),
  fc.integer({ min: 1, max: 3 }).map((misses): Action => ({ kind: 'explore', misses })),
)

const step = (...calls: ScriptToolCall[]): ScriptResponse => ({ text: 'Working.', toolCalls: calls })
const tool = (name: string, args: Record<string, unknown>): ScriptToolCall => ({ name, arguments: args })
const counter = (file: string, label: string) => `n=$(cat ${file} 2>/dev/null || echo 0); n=$((n+1)); echo $n > ${file}; echo "${label} $n"`

/** The model calls of one run; every name is unique to the run and the action, so no two results are alike. */
function stepsOf(run: number, actions: Action[]): ScriptResponse[] {
  const steps: ScriptResponse[] = []
  let files = 0
  let fixtures = 0
  let docs = 0
  actions.forEach((a, i) => {
    const name = `r${run}-${i}`
    switch (a.kind) {
      case 'read': steps.push(step(tool('read_file', { path: `seed-${files++ % 40}.txt` }))); break
      case 'parallel': steps.push(step(...Array.from({ length: a.count }, () => tool('read_file', { path: `seed-${files++ % 40}.txt` })))); break
      case 'fixtures':
        for (let f = 0; f < a.count; f++) steps.push(step(tool('read_file', { path: `fixture${++fixtures}.txt` })))
        break
      case 'survey': {
        const first = docs
        for (let d = 0; d < a.count; d++) steps.push(step(tool('read_file', { path: `doc-${docs++}.md` })))
        steps.push({ text: `Summary of documents ${first} to ${docs - 1}.` })
        break
      }
      case 'explore':
        for (let m = 0; m < a.misses; m++) steps.push({ text: 'Looking for the file.', toolCalls: [tool('read_file', { path: `${name}-guess-${m}.md` })] })
        steps.push({ text: 'Looking for the file.', toolCalls: [tool('read_file', { path: `doc-${docs++}.md` })] })
        break
      case 'write': steps.push(step(tool('write_file', { path: `${name}.txt`, content: `written by ${name}\n` }))); break
      case 'edit':
        steps.push(step(tool('write_file', { path: `${name}.txt`, content: 'draft\n' })))
        steps.push(step(tool('edit_file', { path: `${name}.txt`, old_string: 'draft', new_string: `final ${name}` })))
        break
      case 'reread':
        steps.push(step(tool('write_file', { path: `${name}.txt`, content: 'version 0\n' })), step(tool('read_file', { path: `${name}.txt` })))
        steps.push(step(tool('edit_file', { path: `${name}.txt`, old_string: 'version 0', new_string: 'version 1' })), step(tool('read_file', { path: `${name}.txt` })))
        break
      case 'poll':
        for (let t = 0; t < a.times; t++) steps.push(step(tool('run_command', { command: counter(`${name}.n`, 'build step') })))
        break
      case 'pair':
        for (let t = 0; t < a.times; t++) {
          steps.push(step(tool('run_command', { command: counter(`${name}.a`, 'built revision') })))
          steps.push(step(tool('run_command', { command: counter(`${name}.b`, 'suites passing:') })))
        }
        break
      case 'fix': {
        // A test that fails with a changing count until the file has enough lines; each attempt adds one.
        const test = `n=$(wc -l < ${name}.txt); [ $n -ge ${a.attempts + 1} ] && echo PASS || { echo "$((${a.attempts + 1} - n)) checks failing"; exit 1; }`
        for (let t = 1; t <= a.attempts + 1; t++) {
          steps.push(step(tool('write_file', { path: `${name}.txt`, content: 'ok\n'.repeat(t) })))
          steps.push(step(tool('run_command', { command: test })))
        }
        break
      }
    }
  })
  return steps
}

describe('legitimate runs under the default policies', () => {
  it(`never stops a generated run whose results keep changing (fast-check seed ${SEED})`, async () => {
    console.log(`fast-check seed ${SEED}`)
    let run = 0
    await fc.assert(fc.asyncProperty(fc.array(action, { minLength: 1, maxLength: 12 }), async (actions) => {
      const steps = stepsOf(++run, actions).slice(0, 48)
      const agent = await app.root.agents.create({ model: 'scripted', cwd: app.workspace })
      const complete = (): ScriptResponse => {
        const goal = app.root.goals.get(agent)!
        return step(tool('update_goal', { goal_id: goal.id, revision: goal.revision, action: 'complete' }))
      }
      scripted().reset([...steps, complete, { text: 'Done.' }])
      const settled = new Promise<GoalChange>((resolve) => {
        const off = app.root.on('goal/changed', (changed, change) => {
          if (changed.id === agent.id && change.goal?.phase !== 'active') { off(); resolve(change) }
        })
      })
      app.root.goals.create(agent, { objective: `legitimate run ${run}` })
      const change = await settled
      await agent.whenIdle()
      const records = agent.session.records
      await agent.dispose()
      expect(change.goal?.blockedReason ?? null).toBeNull()
      expect(change.goal?.phase).toBe('complete')
      // One goal round per survey (each ends with its summary), then the round that completes.
      expect(outcomes(records).every((o) => o.kind === 'completed')).toBe(true)
      // Not even a hint.
      expect(fromPolicies(records)).toEqual([])
    }), { seed: SEED, numRuns: 14 })
    expect(app.errors).toEqual([])
  }, 180_000)
})
