import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { CLI_TIMEOUT, run, start, useProject } from '@goalkeeper/test-kit'

const project = useProject()

// The script and this plugin share one promise in the child process: the plugin resolves it when a
// reload starts it with phase 2, which the loader does after unloading the entries that changed.
const RELOAD_SIGNAL = `(globalThis.__gkReload ??= (() => { let resolve; const promise = new Promise((r) => (resolve = r)); return { promise, resolve } })())`

const probe = `export const name = 'probe'
export const apply = (ctx, config) => {
  if (config?.phase === 2) {
    process.stderr.write('probe: phase 2\\n');
    ${RELOAD_SIGNAL}.resolve()
  }
}
`

describe('goalkeeper --watch', { timeout: CLI_TIMEOUT }, () => {
  it('reloads a changed cordis.yml while a goal runs (loop-guard disabled mid-round); the goal still completes', async () => {
    const p = await project({
      extraYml: "- id: probe\n  name: ./probe.mjs\n  config: { phase: 1 }\n",
      script: `export default many(async (request) => {
        if (roundOf(request) !== 1) return completeGoal(request)
        say('round 1 waits for the reload')
        await ${RELOAD_SIGNAL}.promise
        return { text: 'Round 1 done after the reload.' }
      })`,
    })
    await writeFile(path.join(p.dir, 'probe.mjs'), probe)
    const goal = start([...p.globals, '--watch', 'goal', 'Survive a reload', '--max-rounds', '3'])
    await goal.waitFor('stderr', /script: round 1 waits for the reload\n/)

    const yml = await readFile(p.yml, 'utf8')
    const edited = yml.replace("name: '@goalkeeper/loop-guard'", "name: '@goalkeeper/loop-guard'\n  disabled: true").replace('phase: 1', 'phase: 2')
    expect(edited).not.toBe(yml)
    await writeFile(p.yml, edited)

    expect(await goal.exited(), goal.stderr()).toBe(0)
    expect(goal.stdout()).toBe('Goal done: everything is verified.\nGoal complete (not verified) after 2/3 rounds: "Survive a reload"\n')
    const lines = goal.stderr().split('\n')
    const reloaded = lines.findIndex((line) => line.startsWith(`goalkeeper: reloaded ${p.yml}: 2 reloaded, 12 unchanged`))
    expect(reloaded, goal.stderr()).toBeGreaterThan(lines.indexOf('round 1/3'))
    expect(lines.indexOf('probe: phase 2')).toBeGreaterThan(lines.indexOf('round 1/3'))
    expect(lines.indexOf('round 2/3')).toBeGreaterThan(reloaded)

    // The edited file is what the composition now is: loop-guard disabled, and the file not rewritten.
    expect(await readFile(p.yml, 'utf8')).toBe(edited)
    const check = await run([...p.globals, 'check'])
    expect(check.stdout).toMatch(/disabled\s+loop-guard\s+@goalkeeper\/loop-guard/)
  })
})
