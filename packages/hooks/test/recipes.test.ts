// The README's recipes, read from the README itself and run through the real loop, with stand-ins on PATH
// for the programs they call (npx, npm, notify-send); jq is the real one.
import fs from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import * as goal from '@goalkeeper/goal'
import { createHarness, done, type Harness, outcomes, pluginMessages } from '@goalkeeper/test-kit'
import * as hooks from '../src/index.ts'
import { binDir, removeBins, script, toolResults, turn } from './scripts.ts'

const readme = await fs.readFile(path.join(path.dirname(fileURLToPath(import.meta.url)), '../README.md'), 'utf8')
/** The hooks of the recipe whose text (before its yaml block) contains `title`. */
function recipe(title: string): Record<string, unknown>[] {
  const section = readme.slice(readme.indexOf('## Recipes'))
  const start = section.indexOf(title)
  const block = /```yaml\n([\s\S]*?)```/.exec(section.slice(start))
  if (start < 0 || !block) throw new Error(`no recipe "${title}" in the README`)
  return parse(block[1]!)
}

let h: Harness | undefined
let bin: string
let savedPath: string | undefined
beforeEach(async () => {
  bin = await binDir()
  savedPath = process.env.PATH
  process.env.PATH = `${bin}:${savedPath}`
})
afterEach(async () => {
  await h?.dispose()
  h = undefined
  process.env.PATH = savedPath
  await removeBins()
})

/** A stand-in for a program on PATH that appends its arguments to `<bin>/<name>.log`. */
const standIn = (name: string, body = '') => script(bin, name, `echo "$@" >> ${bin}/${name}.log\n${body}`)
const calls = async (name: string) => (await fs.readFile(path.join(bin, `${name}.log`), 'utf8')).trim().split('\n')

describe('README recipes', () => {
  it('format after an edit: prettier gets the absolute path of the TypeScript file written', async () => {
    await standIn('npx')
    h = await createHarness()
    await h.load(hooks, { hooks: recipe('Format after an edit') })
    const agent = await h.createAgent()
    await turn(h, agent, [['write_file', { path: 'src/a.ts', content: 'x' }], ['write_file', { path: 'notes.md', content: 'y' }]])
    expect(await calls('npx')).toEqual([`prettier --write ${path.join(h.workspace, 'src/a.ts')}`])
  })

  it('protect a folder: writes under migrations/ are denied with the reason', async () => {
    h = await createHarness()
    await h.load(hooks, { hooks: recipe('Protect a folder') })
    const agent = await h.createAgent()
    await turn(h, agent, [['write_file', { path: 'migrations/002.sql', content: 'x' }]])
    expect(toolResults(h, agent)[0]!.denied).toEqual({ by: 'hooks', reason: 'migrations/ is append-only: add a new migration instead' })
  })

  it('run the tests before stopping: a failing run sends the model back with the output, a passing one lets it stop', async () => {
    // Fails the first time, passes the second.
    await standIn('npm', `if [ -f ${bin}/passed-once ]; then exit 0; fi; touch ${bin}/passed-once; echo "1 failing: adds numbers"; exit 1`)
    h = await createHarness()
    await h.load(hooks, { hooks: recipe('Run the tests before') })
    const agent = await h.createAgent()
    h.scripted.push(done('I am done'), done('fixed it'))
    agent.send({ content: 'fix the tests' })
    await agent.whenIdle()
    expect(await calls('npm')).toEqual(['test', 'test'])
    expect(pluginMessages(h.records(agent), 'hooks')).toEqual([expect.stringMatching(/the tests fail; fix them before you stop:\n1 failing: adds numbers$/)])
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'completed' }])
  })

  it('a desktop notification when a goal completes', async () => {
    await standIn('notify-send')
    h = await createHarness()
    await h.load(goal)
    await h.load(hooks, { hooks: recipe('A desktop notification') })
    const agent = await h.createAgent()
    const created = h.root.goals.create(agent, { objective: 'Ship the release', maxGoalRounds: 3 })
    h.root.goals.complete(agent, created)
    // The unload waits for the notifications under way.
    await h.dispose()
    h = undefined
    expect(await calls('notify-send')).toEqual(['goalkeeper goal completed: Ship the release'])
  })

  it('the example entry at the top is a valid hooks config', () => {
    const [entry] = parse(/```yaml\n([\s\S]*?)```/.exec(readme)![1]!)
    expect(entry.name).toBe('@goalkeeper/hooks')
    const config = hooks.Config(entry.config)
    expect(config.hooks.map((hook) => hooks.parseEvent(hook.event))).toEqual(['before-tool-call', 'after-tool-call', 'goal-changed'])
  })
})
