// --permissions, the header's permissions line and `check`'s sandbox line, on the CLI as a child process
// with the real plugins (the permissions entry as the default cordis.yml writes it); only the model is scripted.
import { readdir } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { CLI_TIMEOUT, jsonLines, readSession, run, sessionIdOf, useProject } from '@goalkeeper/test-kit'

const project = useProject()
const PERMISSIONS = (extra = '') => `- id: permissions\n  name: '@goalkeeper/permissions'\n  config:\n    mode: \${GOALKEEPER_PERMISSIONS:-workspace-write}\n${extra}`
const WRITES = `export default [
  { toolCalls: [{ name: 'write_file', arguments: { path: 'out.txt', content: 'x' } }, { name: 'run_command', arguments: { command: 'echo hi > hi.txt' } }] },
  { text: 'tried' },
]`

describe('goalkeeper --permissions', { timeout: CLI_TIMEOUT }, () => {
  it('read-only in an unattended run: the header says so, writes and commands are denied with a reason, nothing changes', async () => {
    const p = await project({ script: WRITES, extraYml: PERMISSIONS() })
    const result = await run([...p.globals, '--permissions', 'read-only', 'run', 'write something'])
    expect(result.code, result.stderr).toBe(0)
    // One short line; the details are check's.
    expect(result.stderr).toMatch(/^goalkeeper: permissions read-only \(sandboxed, no network\); the rest denied$/m)
    expect(await readdir(p.workspace)).toEqual([])
    const records = await readSession(p, sessionIdOf(result.stderr))
    const denied = records.filter((record) => record.type === 'tool/result').map((record) => record.data.denied)
    expect(denied).toEqual([
      { by: 'permissions', reason: expect.stringMatching(/^write_file changes files, which the read-only permission mode does not allow without asking, and nobody is there to allow it/) },
      { by: 'permissions', reason: expect.stringMatching(/^run_command runs a command/) },
    ])
  })

  it('the default mode comes from cordis.yml: workspace-write writes and runs the command in the sandbox', async () => {
    const p = await project({ script: WRITES, extraYml: PERMISSIONS() })
    const result = await run([...p.globals, 'run', 'write something'])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toMatch(/^goalkeeper: permissions workspace-write \(sandboxed, no network\); others denied$/m)
    expect((await readdir(p.workspace)).sort()).toEqual(['hi.txt', 'out.txt'])
  })

  it('refuses a mode the composition does not put in force, and an unknown mode', async () => {
    const fixed = await project({ script: WRITES, config: {}, extraYml: "- id: permissions\n  name: '@goalkeeper/permissions'\n  config: { mode: read-only }\n" })
    const result = await run([...fixed.globals, '--permissions', 'full', 'run', 'x'])
    expect(result.code).toBe(64)
    expect(result.stderr).toMatch(/goalkeeper: --permissions full: the permissions entry of \S+ fixes the mode read-only \(hint: write its mode as `\$\{GOALKEEPER_PERMISSIONS:-read-only\}`/)

    const none = await project({ script: WRITES })
    const missing = await run([...none.globals, '--permissions', 'read-only', 'goal', 'x'])
    expect(missing.code).toBe(64)
    expect(missing.stderr).toContain('does not load the permissions plugin')
    // Without --permissions such a composition runs as before, and the header says what that means.
    const before = await run([...none.globals, 'run', 'x'])
    expect(before.stderr).toMatch(/^goalkeeper: permissions: none loaded; tools run unsandboxed with your rights$/m)

    const bad = await run([...none.globals, '--permissions', 'yolo', 'run', 'x'])
    expect(bad.code).toBe(64)
    expect(bad.stderr).toContain('--permissions yolo: not a permission mode (hint: use one of read-only, workspace-write, full)')
  })

  it('check names the sandbox, and says when there is none', async () => {
    const p = await project({ script: WRITES, extraYml: PERMISSIONS() })
    const ok = await run([...p.globals, 'check'])
    expect(ok.code).toBe(0)
    // check gives the details the header leaves out, wrapped to 80 columns.
    const details = ok.stdout.replace(/\s+/g, ' ')
    expect(details).toMatch(/permissions workspace-write: file tools inside the workspace; commands sandboxed by bubblewrap \S+ \(capabilities dropped, writes only in the workspace and a private \/tmp, no network\); other tools need a person's yes/)
    expect(details).toMatch(/ sandbox: bubblewrap \S+ \(\/\S*bwrap\), capabilities dropped, commands run as uid \d+(?: |$)/)
    const json = await run([...p.globals, '--json', 'check'])
    expect(jsonLines(json.stdout)[0].permissions).toMatchObject({ mode: 'workspace-write', network: false, sandbox: { available: true, tool: 'bubblewrap', capabilities: 'dropped' } })

    const q = await project({ script: WRITES, extraYml: PERMISSIONS('    bwrap: /nonexistent/bwrap\n') })
    const missing = await run([...q.globals, 'check'])
    expect(missing.code).toBe(0)
    expect(missing.stdout.replace(/\s+/g, ' ')).toContain('permissions workspace-write: file tools inside the workspace; commands refused, no sandbox here: /nonexistent/bwrap was not found; install the Debian/Ubuntu package bubblewrap (apt-get install bubblewrap)')
    expect(missing.stdout).toMatch(/^sandbox: unavailable: \/nonexistent\/bwrap was not found/m)
    for (const line of [...ok.stdout.split('\n'), ...missing.stdout.split('\n')]) expect(line.length, line).toBeLessThanOrEqual(80)
  })
})
