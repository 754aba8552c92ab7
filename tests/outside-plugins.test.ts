// The kit for outside authors, used the way an outsider uses it: the commands of docs/plugins.md, run as
// written, build and pack the @goalkeeper/* packages into a folder outside the repository and install them
// with npm (no registry has them) into a copy of examples/plugins outside the repository, which is then
// compiled with tsc against their published type declarations. Its two plugins run in a goal composed
// from cordis.yml by the real loader, and are unloaded while the goal runs.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { Agent } from '@goalkeeper/agent-loop'
import type { GoalState } from '@goalkeeper/goal'
import type { ScriptedProvider } from '@goalkeeper/model'
import type { SessionRecord } from '@goalkeeper/session'
import { composeFromYml, coreEntries, type Composition, type ProjectPaths } from './compose.ts'

const repo = path.resolve('.')
let home: string
let example: string
let app: Composition | undefined

/** The shell lines of docs/plugins.md's block that builds the kit, comments left out. */
async function documentedSteps(): Promise<string[]> {
  const guide = await fs.readFile(path.join(repo, 'docs/plugins.md'), 'utf8')
  const block = [...guide.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]).find((text) => text.includes('build:packages'))
  if (!block) throw new Error('docs/plugins.md has no sh block with npm run build:packages')
  return block.split('\n').map((line) => line.trim()).filter((line) => line && !line.startsWith('#'))
}

beforeAll(async () => {
  home = await fs.mkdtemp(path.join(os.tmpdir(), 'gk-outside-'))
  example = path.join(home, 'example-plugins')
  await fs.cp(path.join(repo, 'examples/plugins'), example, { recursive: true })
  // The guide's `~` is this temporary home; npm keeps the runner's cache (a fresh one would download everything).
  const npmCache = execFileSync('npm', ['config', 'get', 'cache'], { encoding: 'utf8' }).trim()
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('npm_')))
  Object.assign(env, { HOME: home, npm_config_cache: npmCache, npm_config_prefer_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' })
  const [pack, install] = await documentedSteps()
  expect(pack).toBe('npm run build:packages -- --out ~/goalkeeper-packs')
  // tsc prints its errors on stdout: keep them visible when a step fails.
  execFileSync('sh', ['-c', pack], { cwd: repo, env, stdio: ['ignore', 'inherit', 'inherit'] })
  execFileSync('sh', ['-c', install], { cwd: example, env, stdio: ['ignore', 'inherit', 'inherit'] })
}, 300_000)

afterAll(async () => {
  if (home) await fs.rm(home, { recursive: true, force: true })
})

afterEach(async () => {
  await app?.dispose()
  app = undefined
})

const OBJECTIVE = 'Write the notes files'

function composition(paths: ProjectPaths, plugins: boolean): string {
  const entries = plugins
    ? `- id: word-count
  name: ${path.join(example, 'dist/word-count.js')}
- id: write-limit
  name: ${path.join(example, 'dist/write-limit.js')}
  config: { maxWrites: 2 }
`
    : ''
  return `${coreEntries(paths, { scripted: { module: path.join(paths.dir, 'script.mjs') } })}${entries}- id: goal-session
  name: '@goalkeeper/goal-session'
`
}

const call = (name: string, args: Record<string, unknown>) => `{ toolCalls: [{ name: ${JSON.stringify(name)}, arguments: ${JSON.stringify(args)} }] }`
const results = (records: readonly SessionRecord[]) => records.filter((r) => r.type === 'tool/result').map((r) => r.data as Record<string, any>)

function until(agent: Agent, predicate: (goal: GoalState | undefined) => boolean): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (!predicate(app!.root.goals.get(agent))) return
      offs.forEach((off) => off())
      resolve()
    }
    const offs = [app!.root.on('goal/changed', check), app!.root.on('goal/activation', check)]
    check()
  })
}

describe('examples/plugins, built against the packed packages', () => {
  it('the tool answers the model, and the policy denies the third write of a round and blocks the goal', async () => {
    const script = `export default [
  ${call('create_goal', { objective: OBJECTIVE, max_rounds: 3 })},
  { text: 'Goal set.' },
  ${call('word_count', { text: 'three little words\nand more' })},
  ${call('write_file', { path: 'a.md', content: 'a' })},
  ${call('write_file', { path: 'b.md', content: 'b' })},
  ${call('write_file', { path: 'c.md', content: 'c' })},
  { text: 'The third write was refused.' },
]`
    app = await composeFromYml((paths) => composition(paths, true), { 'script.mjs': script })
    const agent = await app.root.agents.create({ model: 'scripted', cwd: app.workspace })
    const blocked = until(agent, (goal) => goal?.phase === 'blocked')
    agent.send({ content: `Make this a goal: ${OBJECTIVE}` })
    await blocked
    await agent.whenIdle()
    const records = await app.readLog(agent)
    const [, count, a, b, c] = results(records)
    expect(count).toMatchObject({ ok: true, content: '5 words, 2 lines, 27 characters' })
    expect(a.ok && b.ok).toBe(true)
    expect(c).toMatchObject({ ok: false, error: { code: 'DENIED' }, denied: { by: 'write-limit' } })
    expect(c.denied.reason).toMatch(/^more than 2 file writes in one goal round/)
    await expect(fs.stat(path.join(app.workspace, 'c.md'))).rejects.toThrow()
    expect(app.root.goals.get(agent)).toMatchObject({ phase: 'blocked', blockedReason: { code: 'write-limit' } })
    expect(app.errors).toEqual([])
  })

  it('unloaded mid-goal by a reload of cordis.yml: the tool is gone from the next call on, writes are no longer limited', async () => {
    const script = `export default [
  ${call('create_goal', { objective: OBJECTIVE, max_rounds: 3 })},
  { text: 'Goal set.' },
  ${call('word_count', { text: 'one two' })},
  // The test unloads both plugins while this step is pending, and releases it afterwards.
  async () => { await globalThis.__release; return ${call('word_count', { text: 'one two three' })} },
  ${call('write_file', { path: 'a.md', content: 'a' })},
  ${call('write_file', { path: 'b.md', content: 'b' })},
  ${call('write_file', { path: 'c.md', content: 'c' })},
  ${call('get_goal', {})},
  (request) => {
    const result = [...request.messages].reverse().find((m) => m.role === 'tool' && m.name === 'get_goal')
    const goal = JSON.parse(result.content).goal
    return { toolCalls: [{ name: 'update_goal', arguments: { goal_id: goal.goal_id, revision: goal.revision, action: 'complete' } }] }
  },
  { text: 'Done.' },
]`
    let release!: () => void
    ;(globalThis as Record<string, unknown>).__release = new Promise<void>((resolve) => (release = resolve))
    app = await composeFromYml((paths) => composition(paths, true), { 'script.mjs': script })
    const scripted = app.root.models.get('scripted') as ScriptedProvider
    const agent = await app.root.agents.create({ model: 'scripted', cwd: app.workspace })
    const complete = until(agent, (goal) => goal?.phase === 'complete')
    const pending = new Promise<void>((resolve) => {
      const off = app!.root.on('tool/after-call', (report) => {
        if (report.name !== 'word_count') return
        off()
        resolve()
      })
    })
    agent.send({ content: `Make this a goal: ${OBJECTIVE}` })
    // The first word_count ran inside round 1; the model's next answer is now held.
    await pending
    await fs.writeFile(app.file, composition(app, false))
    const report = await app.loader.reload()
    expect(report.changes.removed).toEqual(['word-count', 'write-limit'])
    expect(app.root.tools.get('word_count')).toBeUndefined()
    release()
    await complete
    await agent.whenIdle()
    const records = await app.readLog(agent)
    const [, first, second, ...writes] = results(records)
    expect(first).toMatchObject({ ok: true, content: '2 words, 1 lines, 7 characters' })
    expect(second).toMatchObject({ ok: false, error: { code: 'UNKNOWN_TOOL' } })
    expect(writes.slice(0, 3).map((result) => result.ok)).toEqual([true, true, true])
    // The next request no longer offers the tool to the model.
    expect(scripted.requests.at(-1)!.tools.map((tool) => tool.name)).not.toContain('word_count')
    expect(app.errors).toEqual([])
  })
})
