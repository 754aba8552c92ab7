import { mkdir, realpath, rm } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { CLI_TIMEOUT, jsonLines, run, useProject } from '@goalkeeper/test-kit'

const project = useProject()

describe('check on a huge cordis.yml', { timeout: CLI_TIMEOUT }, () => {
  it('reports 20,000 disabled entries besides the real ones, one line each, and exits 0', async () => {
    const extra = Array.from({ length: 20_000 }, (_, i) => `- id: off${i}\n  name: '@goalkeeper/model'\n  disabled: true\n`).join('')
    const p = await project({ script: 'export default many(() => ({ text: "ok" }))', extraYml: extra })
    const started = performance.now()
    const checked = await run([...p.globals, 'check'])
    const seconds = (performance.now() - started) / 1000
    expect(checked.code, checked.stderr).toBe(0)
    const lines = checked.stdout.split('\n')
    expect(lines.filter((line) => /^ {2}disabled {2}off\d+ +@goalkeeper\/model$/.test(line))).toHaveLength(20_000)
    expect(checked.stdout).toMatch(/\n\d+ entries: \d+ loaded, 20000 disabled\n/)
    // A few seconds on an idle machine; the report used to overflow the stack at 200,000 entries.
    expect(seconds).toBeLessThan(90)
  })
})

describe('check and the session key', { timeout: CLI_TIMEOUT }, () => {
  it('warns when the workspace contains the signing key or session logs, and not otherwise', async () => {
    const p = await project({ script: 'export default many(() => ({ text: "ok" }))', config: { session: { dir: 'logs' } } })
    await mkdir(path.join(p.workspace, 'logs'))
    const env = { XDG_CONFIG_HOME: path.join(p.workspace, '.config') }
    const checked = await run([...p.globals, 'check'], { env })
    expect(checked.code, checked.stderr).toBe(0)
    const key = path.join(p.workspace, '.config', 'goalkeeper', 'session.key')
    const workspace = await realpath(p.workspace)
    // check wraps its warnings to 80 columns (paths stay whole): read as one text.
    const warnings = checked.stdout.replace(/\s+/g, ' ')
    expect(warnings).toContain(`warning: the workspace ${workspace} contains goalkeeper's session signing key (${key}): tools refuse it and sandboxed commands cannot see it, but a command in the full mode can read it and sign a person's input into any session; work in a directory that does not contain it`)
    expect(warnings).toContain(`warning: the workspace ${workspace} contains session logs (${path.join(p.workspace, 'logs')}): tools cannot change them and sandboxed commands see them read-only, but a command in the full mode can`)
    const json = jsonLines((await run([...p.globals, '--json', 'check'], { env })).stdout)[0]
    expect(json.warnings).toHaveLength(2)

    const apart = await run([...p.globals, 'check'])
    expect(apart.code, apart.stderr).toBe(0)
    expect(apart.stdout).toContain('warning: the workspace')
    await rm(path.join(p.workspace, 'logs'), { recursive: true })
    const clean = await run([...p.globals, 'check'])
    expect(clean.stdout).not.toContain('warning:')
    expect(jsonLines((await run([...p.globals, '--json', 'check'])).stdout)[0].warnings).toEqual([])
  })
})
