// Both policy plugins in one composition loaded from a cordis.yml by the host's real loader, driving a
// real goal run (goal + goal-session round driver) on the real agent loop; only the model is scripted.
import fs from 'node:fs/promises'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Agent } from '@goalkeeper/agent-loop'
import { parseComposition } from '@goalkeeper/loader'
import type { GoalChange } from '@goalkeeper/goal'
import type { ModelRequest, ScriptedProvider, ScriptResponse } from '@goalkeeper/model'
import type { MistakeLimitState } from '@goalkeeper/mistake-limit'
import type { SessionRecord, UserMessage } from '@goalkeeper/session'
import { outcomes } from '@goalkeeper/test-kit'
import { composeFromYml, coreEntries, defaultPolicies, type Composition, type ProjectPaths } from './compose.ts'

let app: Composition
beforeEach(async () => { app = await composeFromYml(composition, { 'workspace/a.txt': 'alpha\n' }) })
afterEach(() => app.dispose())

function composition(paths: ProjectPaths, options: { mistakeLimitDisabled?: boolean; softThreshold?: number } = {}) {
  return `# policy composition under test
${coreEntries(paths)}- id: goal-session
  name: '@goalkeeper/goal-session'
- id: loop-guard
  name: '@goalkeeper/loop-guard'
  config:
    softThreshold: ${options.softThreshold ?? 3}
    hardThreshold: 5
    exclude: [get_goal]
- id: mistake-limit
  name: '@goalkeeper/mistake-limit'
  disabled: ${options.mistakeLimitDisabled ?? false}
  config: { limit: 3 }
`
}

const scripted = () => app.root.models.get('scripted') as ScriptedProvider
const read = (file: string): ScriptResponse => ({ toolCalls: [{ name: 'read_file', arguments: { path: file } }] })
const getGoal: ScriptResponse = { toolCalls: [{ name: 'get_goal', arguments: {} }] }
const lastUserText = (request: ModelRequest) => request.messages.filter((m) => m.role === 'user').at(-1)?.content.map((b) => b.text).join('')
const fromPlugin = (records: readonly SessionRecord[], name: string) => records
  .filter((r) => r.type === 'user/message' && (r.data as UserMessage).source.kind === 'plugin' && (r.data as any).source.name === name)
  .map((r) => (r.data as UserMessage).content[0].text)

function whenGoal(agent: Agent, phase: string): Promise<GoalChange> {
  return new Promise((resolve) => {
    const off = app.root.on('goal/changed', (changed, change) => {
      if (changed.id === agent.id && change.goal?.phase === phase) {
        off()
        resolve(change)
      }
    })
  })
}

describe('loop-guard and mistake-limit together, composed from cordis.yml', () => {
  it('a goal run: hint, loop escalation answered by the decision hook, then the mistake limit blocks the goal', async () => {
    const decisions: MistakeLimitState[] = []
    app.root.on('mistake-limit/reached', (_agent, state) => {
      decisions.push(state)
      return decisions.length === 1
        ? { action: 'continue', guidance: 'Stop re-reading a.txt and write NOTES.md now.' }
        : { action: 'stop', reason: 'unattended run' }
    })
    const agent = await app.root.agents.create({ model: 'scripted', cwd: app.workspace })
    scripted().push(
      // get_goal is excluded in cordis.yml: it neither counts nor breaks the streak of reads.
      read('a.txt'), getGoal, read('a.txt'), getGoal, read('a.txt'),
      read('a.txt'), read('a.txt'),
      // Three steps in which every call fails: the mistake limit of cordis.yml.
      read('notes/missing-1.md'), read('notes/missing-2.md'), read('notes/missing-3.md'),
      { text: 'never requested' },
    )
    const blocked = whenGoal(agent, 'blocked')
    const goal = app.root.goals.create(agent, { objective: 'Summarise a.txt into NOTES.md', maxGoalRounds: 3 })
    const change = await blocked
    await agent.whenIdle()

    const requests = scripted().requests
    expect(requests).toHaveLength(10)
    expect(requests[0].messages[0].role).toBe('user')
    expect(lastUserText(requests[5])).toMatch(/^Loop guard: `read_file` \{"path":"a.txt"\} was called 3 times in a row/)
    expect(lastUserText(requests[7])).toBe('Stop re-reading a.txt and write NOTES.md now.')

    expect(decisions.map((d) => d.cause)).toEqual(['policy-escalation', 'tool-failures'])
    expect(decisions[0].escalation).toMatchObject({ source: 'loop-guard', code: 'repeated-tool-call' })
    expect(change.goal).toMatchObject({ id: goal.id, phase: 'blocked', roundsStarted: 1 })
    expect(change.goal!.blockedReason!.code).toBe('mistake-limit')
    expect(change.goal!.blockedReason!.message).toMatch(/^3 consecutive steps in which every tool call failed \(limit 3\)\. .*Decision: unattended run\.$/)

    // The round driver does nothing more: one goal round, aborted by policy, and the log on disk agrees.
    const onDisk = await app.readLog(agent)
    expect(outcomes(onDisk)).toEqual([{ kind: 'aborted', cause: 'policy' }])
    expect(onDisk.filter((r) => r.type === 'user/message' && (r.data as UserMessage).source.kind === 'goal')).toHaveLength(1)
    expect(fromPlugin(onDisk, 'loop-guard')).toHaveLength(2)
    expect(fromPlugin(onDisk, 'mistake-limit')).toEqual([])
    expect(app.errors).toEqual([])
  })

  it('a loop in a goal round with no decision hook blocks the goal as repeated-tool-call', async () => {
    const agent = await app.root.agents.create({ model: 'scripted', cwd: app.workspace })
    scripted().push(read('a.txt'), read('a.txt'), read('a.txt'), read('a.txt'), read('a.txt'), { text: 'never requested' })
    const blocked = whenGoal(agent, 'blocked')
    app.root.goals.create(agent, { objective: 'Summarise a.txt', maxGoalRounds: 3 })
    const change = await blocked
    await agent.whenIdle()
    expect(change.goal!.blockedReason).toEqual({
      code: 'repeated-tool-call',
      message: '`read_file` {"path":"a.txt"} was called 5 times in a row with the same arguments and returned the same result each time.',
    })
    expect(scripted().requests).toHaveLength(5)
    expect(outcomes(agent.session.records)).toEqual([{ kind: 'aborted', cause: 'policy' }])
  })

  it('a human /goal resume after Ctrl-C starts the counts over: the resumed round does not inherit the failures before the pause', async () => {
    const agent = await app.root.agents.create({ model: 'scripted', cwd: app.workspace })
    let hung!: () => void
    const hanging = new Promise<void>((resolve) => (hung = resolve))
    scripted().push(read('notes/missing-1.md'), read('notes/missing-2.md'), () => {
      hung()
      return new Promise<ScriptResponse>(() => {})
    })
    const paused = whenGoal(agent, 'paused')
    const goal = app.root.goals.create(agent, { objective: 'Summarise notes/ into NOTES.md', maxGoalRounds: 2 })
    await hanging
    // What the host's first SIGINT does: the round driver pauses the goal.
    agent.cancel('user')
    const pause = await paused
    await agent.whenIdle()

    // One more failure after the resume would make three in a row, the limit of cordis.yml.
    scripted().push(read('notes/missing-3.md'), { text: 'There are no notes yet; nothing to summarise.' })
    const blocked = whenGoal(agent, 'blocked')
    app.root.goals.resume(agent, { id: goal.id, revision: pause.goal!.revision })
    const change = await blocked
    await agent.whenIdle()
    expect(change.goal!.blockedReason!.code).toBe('round-limit')
    expect(outcomes(await app.readLog(agent))).toEqual([{ kind: 'aborted', cause: 'user' }, { kind: 'completed' }])
    expect(app.errors).toEqual([])
  })

  it('a cordis.yml reload reconfigures one policy and disabling the other removes it, while the rest keeps running', async () => {
    const agent = await app.root.agents.create({ model: 'scripted', cwd: app.workspace })
    await fs.writeFile(app.file, composition(app, { softThreshold: 2, mistakeLimitDisabled: true }))
    const report = await app.loader.reload()
    expect(report.changes.reloaded.sort()).toEqual(['loop-guard', 'mistake-limit'])
    let asked = 0
    app.root.on('mistake-limit/reached', () => (++asked, { action: 'continue' }))

    scripted().push(read('a.txt'), read('a.txt'), { text: 'ok' })
    agent.send({ content: 'read a.txt twice' })
    await agent.whenIdle()
    expect(fromPlugin(agent.session.records, 'loop-guard')).toEqual([expect.stringMatching(/was called 2 times in a row/)])

    // Without mistake-limit nobody answers the escalation: loop-guard stops on its own, outside a goal.
    scripted().push(read('a.txt'), read('a.txt'), read('a.txt'), read('a.txt'), read('a.txt'), { text: 'never requested' })
    agent.send({ content: 'again' })
    await agent.whenIdle()
    expect(asked).toBe(0)
    expect(outcomes(agent.session.records)).toEqual([{ kind: 'completed' }, { kind: 'aborted', cause: 'policy' }])
    expect(fromPlugin(agent.session.records, 'loop-guard').at(-1)).toMatch(/^Loop guard stopped this turn: .* 5 times in a row/)
  })
})

describe('the default policies together, composed from cordis.yml', () => {
  it('are what the repository cordis.yml loads: every policy plugin, enabled, with no config, before the round driver', async () => {
    const specs = parseComposition(await fs.readFile(new URL('../cordis.yml', import.meta.url), 'utf8'), {})
    const policies = specs.filter((spec) => /^@goalkeeper\/(loop-guard|mistake-limit|no-progress)$/.test(spec.name ?? ''))
    expect(policies.map((spec) => [spec.name, spec.config, spec.disabled])).toEqual([
      ['@goalkeeper/loop-guard', undefined, false], ['@goalkeeper/mistake-limit', undefined, false], ['@goalkeeper/no-progress', undefined, false],
    ])
    expect(specs.findIndex((spec) => spec.name === '@goalkeeper/goal-session')).toBeGreaterThan(specs.indexOf(policies[2]))
  })

  beforeEach(async () => {
    await app.dispose()
    app = await composeFromYml(defaultPolicies, { 'workspace/a.txt': 'alpha\n' })
  })

  it('a human message between goal rounds does not reset the counts: the next round is stopped where the streak ends', async () => {
    const agent = await app.root.agents.create({ model: 'scripted', cwd: app.workspace })
    scripted().push(read('a.txt'), read('a.txt'), () => {
      // Typed while the round runs; it is answered once the round is over.
      agent.send({ content: 'How is it going?' })
      return { text: 'Still reading a.txt.' }
    }, { text: 'I am reading a.txt.' }, read('a.txt'), read('a.txt'), read('a.txt'), { text: 'never requested' })
    const blocked = whenGoal(agent, 'blocked')
    app.root.goals.create(agent, { objective: 'Summarise a.txt', maxGoalRounds: 5 })
    const change = await blocked
    await agent.whenIdle()
    expect(change.goal!.blockedReason!.message).toMatch(/^`read_file` \{"path":"a.txt"\} was called 5 times in a row/)
    expect(scripted().requests).toHaveLength(7)
    expect(app.errors).toEqual([])
  })

  it('a human message that preempts a goal round does not reset the counts either: the round after the human turn ends the streak', async () => {
    const agent = await app.root.agents.create({ model: 'scripted', cwd: app.workspace })
    scripted().push(read('a.txt'), read('a.txt'), () => {
      agent.send({ content: 'Why a.txt again?' })
      return read('a.txt')
    }, { text: 'Because of the summary.' }, read('a.txt'), read('a.txt'), { text: 'never requested' })
    const blocked = whenGoal(agent, 'blocked')
    app.root.goals.create(agent, { objective: 'Summarise a.txt', maxGoalRounds: 5 })
    const change = await blocked
    await agent.whenIdle()
    const records = await app.readLog(agent)
    const turns = records.filter((r) => r.type === 'turn/end').map((r) => (r.data as { outcome: { kind: string } }).outcome.kind)
    // Round 1 yielded after its third call, the human turn ran, round 2 made the fourth and fifth.
    expect(turns).toEqual(['preempted', 'completed', 'aborted'])
    expect(lastUserText(scripted().requests[3])).toBe('Why a.txt again?')
    expect(change.goal!.blockedReason!.message).toMatch(/^`read_file` \{"path":"a.txt"\} was called 5 times in a row/)
    expect(scripted().requests).toHaveLength(6)
    expect(app.errors).toEqual([])
  })

  it('rounds that change nothing are blocked as no-progress in the third, with the hint in its system prompt', async () => {
    const agent = await app.root.agents.create({ model: 'scripted', cwd: app.workspace })
    scripted().push({ text: 'Planning.' }, {}, { text: 'Planning.' }, { text: 'never requested' })
    const blocked = whenGoal(agent, 'blocked')
    app.root.goals.create(agent, { objective: 'Summarise a.txt' })
    const change = await blocked
    await agent.whenIdle()
    expect(change.goal!.blockedReason).toEqual({
      code: 'no-progress',
      message: '3 goal rounds in a row changed nothing (no successful edit, command or goal update call, '
        + 'and no read or search call that found something new): '
        + 'round 1 ended with text only: "Planning."; round 2 ended with an empty reply; round 3 ended with text only: "Planning.".',
    })
    expect(scripted().requests.map((r) => /No progress: 2 goal rounds/.test(r.system ?? ''))).toEqual([false, false, true])
  })
})
