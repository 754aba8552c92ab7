// Both policy plugins in one composition loaded from a cordis.yml by the host's real loader, driving a
// real goal run (goal + goal-session round driver) on the real agent loop; only the model is scripted.
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Context, Logger } from 'cordis'
import { formatReport, Loader } from '@goalkeeper/host'
import type { Agent } from '@goalkeeper/agent-loop'
import type { GoalChange } from '@goalkeeper/goal'
import type { ModelRequest, ScriptedProvider, ScriptResponse } from '@goalkeeper/model'
import type { MistakeLimitState } from '@goalkeeper/mistake-limit'
import type { SessionRecord, TurnOutcome, UserMessage } from '@goalkeeper/session'

let dir: string
let workspace: string
let file: string
let root: Context
let loader: Loader
let logs: { level: string; name: string; text: string }[]

function composition(options: { mistakeLimitDisabled?: boolean; softThreshold?: number } = {}) {
  return `# policy composition under test
- id: session
  name: '@goalkeeper/session'
  config: { dir: ${JSON.stringify(path.join(dir, 'sessions'))} }
- id: model
  name: '@goalkeeper/model'
- id: tools
  name: '@goalkeeper/tools'
- id: workspace-tools
  name: '@goalkeeper/workspace-tools'
  config: { root: ${JSON.stringify(workspace)} }
- id: agent-loop
  name: '@goalkeeper/agent-loop'
- id: goal
  name: '@goalkeeper/goal'
- id: tool-goal
  name: '@goalkeeper/tool-goal'
- id: goal-session
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

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gk-'))
  workspace = path.join(dir, 'workspace')
  await fs.mkdir(workspace)
  await fs.writeFile(path.join(workspace, 'a.txt'), 'alpha\n')
  // Package names in cordis.yml resolve from the file's directory, as they would in a project.
  await fs.symlink(path.resolve('node_modules'), path.join(dir, 'node_modules'), 'dir')
  file = path.join(dir, 'cordis.yml')
  await fs.writeFile(file, composition())
  root = new Context()
  logs = []
  const exporter = {
    levels: { default: 3 },
    formatters: { c: (value: unknown) => String(value) },
    export: (message: any) => logs.push({ level: message.type, name: message.name, text: Logger.format(exporter as any, message) }),
  }
  root.logger.exporter(exporter)
  loader = new Loader(root, { file, env: {} })
  const report = await loader.load()
  expect(report.ok, formatReport(report).join('\n')).toBe(true)
})

afterEach(async () => {
  await loader.dispose()
  await fs.rm(dir, { recursive: true, force: true })
})

const scripted = () => root.models.get('scripted') as ScriptedProvider
const read = (file: string): ScriptResponse => ({ toolCalls: [{ name: 'read_file', arguments: { path: file } }] })
const getGoal: ScriptResponse = { toolCalls: [{ name: 'get_goal', arguments: {} }] }
const lastUserText = (request: ModelRequest) => request.messages.filter((m) => m.role === 'user').at(-1)?.content.map((b) => b.text).join('')
const outcomes = (records: readonly SessionRecord[]) => records.filter((r) => r.type === 'turn/end').map((r) => (r.data as { outcome: TurnOutcome }).outcome)
const fromPlugin = (records: readonly SessionRecord[], name: string) => records
  .filter((r) => r.type === 'user/message' && (r.data as UserMessage).source.kind === 'plugin' && (r.data as any).source.name === name)
  .map((r) => (r.data as UserMessage).content[0].text)

function whenGoal(agent: Agent, phase: string): Promise<GoalChange> {
  return new Promise((resolve) => {
    const off = root.on('goal/changed', (changed, change) => {
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
    root.on('mistake-limit/reached', (_agent, state) => {
      decisions.push(state)
      return decisions.length === 1
        ? { action: 'continue', guidance: 'Stop re-reading a.txt and write NOTES.md now.' }
        : { action: 'stop', reason: 'unattended run' }
    })
    const agent = await root.agents.create({ model: 'scripted', cwd: workspace })
    scripted().push(
      // get_goal is excluded in cordis.yml: it neither counts nor breaks the streak of reads.
      read('a.txt'), getGoal, read('a.txt'), getGoal, read('a.txt'),
      read('a.txt'), read('a.txt'),
      // Three steps in which every call fails: the mistake limit of cordis.yml.
      read('notes/missing-1.md'), read('notes/missing-2.md'), read('notes/missing-3.md'),
      { text: 'never requested' },
    )
    const blocked = whenGoal(agent, 'blocked')
    const goal = root.goals.create(agent, { objective: 'Summarise a.txt into NOTES.md', maxGoalRounds: 3 })
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
    await root.sessions.flush(agent.session)
    const onDisk = (await fs.readFile(agent.session.file, 'utf8')).trim().split('\n').map((line) => JSON.parse(line))
    expect(outcomes(onDisk)).toEqual([{ kind: 'aborted', cause: 'policy' }])
    expect(onDisk.filter((r) => r.type === 'user/message' && r.data.source.kind === 'goal')).toHaveLength(1)
    expect(fromPlugin(onDisk, 'loop-guard')).toHaveLength(2)
    expect(fromPlugin(onDisk, 'mistake-limit')).toEqual([])
    expect(logs.filter((l) => l.level === 'error')).toEqual([])
  })

  it('a loop in a goal round with no decision hook blocks the goal as repeated-tool-call', async () => {
    const agent = await root.agents.create({ model: 'scripted', cwd: workspace })
    scripted().push(read('a.txt'), read('a.txt'), read('a.txt'), read('a.txt'), read('a.txt'), { text: 'never requested' })
    const blocked = whenGoal(agent, 'blocked')
    root.goals.create(agent, { objective: 'Summarise a.txt', maxGoalRounds: 3 })
    const change = await blocked
    await agent.whenIdle()
    expect(change.goal!.blockedReason).toEqual({
      code: 'repeated-tool-call',
      message: '`read_file` {"path":"a.txt"} was called 5 times in a row with the same arguments and returned the same result each time.',
    })
    expect(scripted().requests).toHaveLength(5)
    expect(outcomes(agent.session.records)).toEqual([{ kind: 'aborted', cause: 'policy' }])
  })

  it('a cordis.yml reload reconfigures one policy and disabling the other removes it, while the rest keeps running', async () => {
    const agent = await root.agents.create({ model: 'scripted', cwd: workspace })
    await fs.writeFile(file, composition({ softThreshold: 2, mistakeLimitDisabled: true }))
    const report = await loader.reload()
    expect(report.changes.reloaded.sort()).toEqual(['loop-guard', 'mistake-limit'])
    let asked = 0
    root.on('mistake-limit/reached', () => (++asked, { action: 'continue' }))

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
