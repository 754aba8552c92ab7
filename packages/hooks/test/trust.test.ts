// The trust gate: hooks of a cordis.yml outside the user's config dir run only once the user approved them as
// they are, recorded by digest in the user's config dir. Loaded through the real loader.
import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Loader } from '@goalkeeper/loader'
import { createHarness, type Harness } from '@goalkeeper/test-kit'
import * as hooks from '../src/index.ts'
import { approveHooks, hooksDigest, trustOf } from '../src/index.ts'
import { binDir, removeBins, script, toolResults, turn } from './scripts.ts'

let h: Harness | undefined
let loader: Loader | undefined
let saved: string | undefined
let configHome: string
beforeEach(async () => {
  saved = process.env.XDG_CONFIG_HOME
  configHome = await binDir()
  process.env.XDG_CONFIG_HOME = configHome
})
afterEach(async () => {
  await loader?.dispose()
  loader = undefined
  await h?.dispose()
  h = undefined
  if (saved === undefined) delete process.env.XDG_CONFIG_HOME
  else process.env.XDG_CONFIG_HOME = saved
  await removeBins()
})

const yml = (command: string) => `
- id: hooks
  name: '@goalkeeper/hooks'
  config:
    hooks:
      - event: PreToolUse
        command: ${command}
`

/** Loads `file` with the real loader into the harness (the hooks entry is the plugin under test). */
async function load(file: string) {
  await loader?.dispose()
  loader = new Loader(h!.root, { file, builtins: { '@goalkeeper/hooks': async () => hooks } })
  const report = await loader.load()
  expect(report.ok).toBe(true)
}

async function denied(): Promise<boolean> {
  const agent = await h!.createAgent()
  await turn(h!, agent, [['run_command', { command: 'echo hi' }]])
  return !!toolResults(h!, agent)[0]!.denied
}

describe('trust', () => {
  it('skips the hooks of a workspace cordis.yml until they are approved, and again once they change', async () => {
    const bin = await binDir()
    const block = await script(bin, 'block.sh', 'echo "blocked by the workspace hook" >&2; exit 2')
    h = await createHarness()
    const file = path.join(h.workspace, 'cordis.yml')
    await fs.writeFile(file, yml(block))
    await load(file)
    expect(await denied()).toBe(false)
    const warning = h.logs.find((l) => l.level === 'warn' && l.name === 'hooks')
    expect(warning?.text).toBe(`the 1 hooks of ${await fs.realpath(file)} are not approved and do not run: review them with \`goalkeeper hooks\`, then approve them with \`goalkeeper hooks approve\``)

    // Approved as written in the file (defaults not spelled out): the digest is of what runs.
    await approveHooks(file, [hooksDigest([{ event: 'PreToolUse', command: block }])])
    expect(JSON.parse(await fs.readFile(path.join(configHome, 'goalkeeper', 'hooks-approved.json'), 'utf8')).files).toEqual({
      [await fs.realpath(file)]: [hooksDigest([{ event: 'before-tool-call', command: block, timeout: 60 }])],
    })
    expect((await fs.stat(path.join(configHome, 'goalkeeper', 'hooks-approved.json'))).mode & 0o777).toBe(0o600)
    await load(file)
    expect(await denied()).toBe(true)

    // A changed command is a new decision: skipped until approved again.
    await fs.writeFile(file, yml(`${block} --changed`))
    await load(file)
    expect(await denied()).toBe(false)
  })

  it('runs the hooks of the user\'s own cordis.yml, and of a plugin started from code, without approval', async () => {
    const bin = await binDir()
    const block = await script(bin, 'block.sh', 'echo no >&2; exit 2')
    h = await createHarness()
    const userFile = path.join(configHome, 'goalkeeper', 'cordis.yml')
    await fs.mkdir(path.dirname(userFile), { recursive: true })
    await fs.writeFile(userFile, yml(block))
    expect((await trustOf(userFile, [{ event: 'Stop', command: 'x' }])).state).toBe('user')
    expect((await trustOf(undefined, [{ event: 'Stop', command: 'x' }])).state).toBe('code')
    await load(userFile)
    expect(await denied()).toBe(true)
    expect(h.logs.filter((l) => l.level === 'warn' && l.name === 'hooks')).toEqual([])
  })
})
