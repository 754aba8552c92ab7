// A goal run end to end: a cordis.yml loaded by the host's real loader composes every core plugin and
// the round driver; a human turn creates the goal through `create_goal`, and the scripted model (a
// script module named in the yml) works through three rounds with real file edits.
import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Agent } from '@goalkeeper/agent-loop'
import type { GoalState } from '@goalkeeper/goal'
import type { ScriptedProvider } from '@goalkeeper/model'
import type { SessionRecord, UserMessage } from '@goalkeeper/session'
import { renderGoalRoundPrompt } from '@goalkeeper/goal-session'
import { hangingCall, outcomes } from '@goalkeeper/test-kit'
import { composeFromYml, coreEntries, type Composition, type ProjectPaths } from './compose.ts'

const OBJECTIVE = 'Create greeting.txt saying "hello, world" and a CHECKED marker file once it is verified'

/** The model's answers, one per request, in order; the completing step reads goal_id and revision from get_goal. */
const SCRIPT = `
const call = (name, args) => ({ toolCalls: [{ name, arguments: args }] })
const lastGoal = (request) => {
  const result = [...request.messages].reverse().find((m) => m.role === 'tool' && m.name === 'get_goal')
  return JSON.parse(result.content).goal
}
export default [
  call('create_goal', { objective: ${JSON.stringify(OBJECTIVE)}, max_rounds: 5 }),
  { text: 'Goal created; the rounds will do the work.' },
  // round 1
  call('write_file', { path: 'greeting.txt', content: 'hello\\n' }),
  { text: 'Round 1: wrote greeting.txt; it still lacks ", world".' },
  // round 2
  call('edit_file', { path: 'greeting.txt', old_string: 'hello', new_string: 'hello, world' }),
  { text: 'Round 2: greeting.txt now says hello, world. Verification is left.' },
  // round 3
  call('read_file', { path: 'greeting.txt' }),
  call('write_file', { path: 'CHECKED', content: 'greeting.txt verified\\n' }),
  call('get_goal', {}),
  (request) => {
    const goal = lastGoal(request)
    return call('update_goal', { goal_id: goal.goal_id, revision: goal.revision, action: 'complete' })
  },
  { text: 'greeting.txt says hello, world and CHECKED records the check. The goal is complete.' },
]
`

let app: Composition
beforeEach(async () => { app = await composeFromYml(composition, { 'script.mjs': SCRIPT }) })
afterEach(() => app.dispose())

function composition(paths: ProjectPaths, options: { driverDisabled?: boolean } = {}) {
  return `# goal run under test
${coreEntries(paths, { scripted: { module: path.join(paths.dir, 'script.mjs') } })}- id: goal-session
  name: '@goalkeeper/goal-session'
  disabled: ${options.driverDisabled ?? false}
`
}

const goalRounds = (records: SessionRecord[]) => records
  .filter((r) => r.type === 'user/message' && (r.data as UserMessage).source.kind === 'goal')
  .map((r) => {
    const { round, revision } = (r.data as UserMessage).source as { round: number; revision: number }
    return { round, revision }
  })
const goalOps = (records: SessionRecord[]) => records.filter((r) => r.type === 'goal/change').map((r) => (r.data as { op: string }).op)

function until(agent: Agent, predicate: (goal: GoalState | undefined) => boolean): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (!predicate(app.root.goals.get(agent))) return
      offs.forEach((off) => off())
      resolve()
    }
    const offs = [app.root.on('goal/changed', check), app.root.on('goal/activation', check)]
    check()
  })
}

function roundStarted(round: number): Promise<void> {
  return new Promise((resolve) => {
    const off = app.root.on('agent/turn-start', (_agent, _turn, messages) => {
      if (!messages.some((m) => m.source.kind === 'goal' && m.source.round === round)) return
      off()
      resolve()
    })
  })
}

describe('goal run composed from cordis.yml', () => {
  it('a human turn creates the goal; three rounds edit the workspace and the third completes it', async () => {
    const agent = await app.root.agents.create({ model: 'scripted', cwd: app.workspace })
    const done = until(agent, (goal) => goal?.phase === 'complete')
    agent.send({ content: `Please make this a goal: ${OBJECTIVE}` })
    await done
    await agent.whenIdle()

    expect(await fs.readFile(path.join(app.workspace, 'greeting.txt'), 'utf8')).toBe('hello, world\n')
    expect(await fs.readFile(path.join(app.workspace, 'CHECKED'), 'utf8')).toBe('greeting.txt verified\n')
    const records = await app.readLog(agent)
    expect(goalRounds(records)).toEqual([{ round: 1, revision: 1 }, { round: 2, revision: 1 }, { round: 3, revision: 1 }])
    expect(goalOps(records)).toEqual(['create', 'complete'])
    const goal = app.root.goals.get(agent)!
    expect(goal).toMatchObject({ phase: 'complete', roundsStarted: 3, maxGoalRounds: 5, objective: OBJECTIVE })
    // Each admitted round carries exactly the driver's prompt.
    const prompts = records.filter((r) => r.type === 'user/message' && (r.data as UserMessage).source.kind === 'goal')
      .map((r) => (r.data as UserMessage).content[0].text)
    expect(prompts).toEqual([1, 2, 3].map((round) => renderGoalRoundPrompt(goal, round)))
    expect(outcomes(records).map((outcome) => outcome.kind)).toEqual(['completed', 'completed', 'completed', 'completed'])
    expect((app.root.models.get('scripted') as ScriptedProvider).remaining).toBe(0)
    expect(app.errors).toEqual([])
  })

  it('disabling the driver in cordis.yml mid-round cancels that round; the goal stays active and disarmed and no round follows', async () => {
    const agent = await app.root.agents.create({ model: 'scripted', cwd: app.workspace })
    const scripted = app.root.models.get('scripted') as ScriptedProvider
    // Round 2 hangs in its model call until it is cancelled.
    const hang = hangingCall()
    scripted.reset([
      { toolCalls: [{ name: 'create_goal', arguments: { objective: OBJECTIVE, max_rounds: 5 } }] },
      { text: 'Goal created.' },
      { toolCalls: [{ name: 'write_file', arguments: { path: 'greeting.txt', content: 'hello\n' } }] },
      { text: 'Round 1 done.' },
      hang.step,
    ])
    const second = roundStarted(2)
    agent.send({ content: `Please make this a goal: ${OBJECTIVE}` })
    await second
    // The round flushes its start before its model call: unload it in the call, where it hangs.
    await hang.reached

    await fs.writeFile(app.file, composition(app, { driverDisabled: true }))
    const report = await app.loader.reload()
    expect(report.changes.reloaded).toEqual(['goal-session'])
    expect(report.disabled).toEqual(['goal-session'])
    expect(agent.status).toBe('idle')
    expect(app.root.goals.get(agent)).toMatchObject({ phase: 'active', activation: 'disarmed', roundsStarted: 2 })

    // Going idle again after more human work starts no round.
    scripted.push({ text: 'Still here.' })
    agent.send({ content: 'status?' })
    await new Promise<void>((resolve) => {
      const off = app.root.on('agent/turn-end', () => (off(), resolve()))
    })
    await agent.whenIdle()
    const records = await app.readLog(agent)
    expect(goalRounds(records).map((r) => r.round)).toEqual([1, 2])
    expect(outcomes(records)).toEqual([{ kind: 'completed' }, { kind: 'completed' }, { kind: 'aborted', cause: 'parent' }, { kind: 'completed' }])
    expect(records.filter((r) => r.type === 'input/queued').length).toBe(4)
    expect(app.root.goals.get(agent)).toMatchObject({ phase: 'active', activation: 'disarmed', roundsStarted: 2 })
  })
})
