// `goalkeeper hooks`: listing, the approval of a cordis.yml's hooks, and `hooks test`, as child processes on a
// real project; a run shows that unapproved hooks are skipped and approved ones run.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { CLI_TIMEOUT, jsonLines, run, useProject } from '@goalkeeper/test-kit'

const project = useProject()
let configHome: string
beforeEach(async () => {
  configHome = await mkdtemp(path.join(os.tmpdir(), 'gk-config-'))
})
afterEach(async () => {
  await rm(configHome, { recursive: true, force: true })
})

const hooksYml = (guard: string, stop: string) => `- id: hooks
  name: '@goalkeeper/hooks'
  config:
    hooks:
      - event: PreToolUse
        matcher: Bash
        command: ${guard}
      - event: turn-end
        name: mark the end
        command: ${stop}
`

describe('goalkeeper hooks', { timeout: CLI_TIMEOUT }, () => {
  it('lists, refuses to run unapproved hooks, approves them, then runs them (in a run and in hooks test)', async () => {
    const script = `export default [
      { text: 'Cleaning.', toolCalls: [{ name: 'run_command', arguments: { command: 'rm -rf build' } }] },
      ...many(() => ({ text: 'done' })),
    ]`
    const p0 = await project({ script })
    const guard = path.join(p0.dir, 'guard.sh')
    const marker = path.join(p0.dir, 'ended')
    await writeFile(guard, '#!/bin/sh\ncat >/dev/null\necho "not in this repository" >&2\nexit 2\n', { mode: 0o755 })
    const p = await project({ script, extraYml: hooksYml(guard, `touch ${marker}`) })
    const env = { XDG_CONFIG_HOME: configHome }

    const listed = await run([...p.globals, 'hooks'], { env })
    expect(listed.code, listed.stderr).toBe(0)
    expect(listed.stdout).toBe([
      `${p.yml}, entry "hooks": 2 hooks, which do not run: not approved (review them, then \`goalkeeper hooks approve\`)`,
      `  before-tool-call (PreToolUse), matcher Bash, 60 s: ${guard}`,
      `  turn-end (Stop) "mark the end", 60 s: touch ${marker}`,
      '',
    ].join('\n'))

    const unapproved = await run([...p.globals, 'run', 'clean up'], { env })
    expect(unapproved.code, unapproved.stderr).toBe(0)
    expect(unapproved.stderr).toContain('hooks of')
    expect(unapproved.stderr).toContain('are not approved and do not run')
    await expect(readFile(marker)).rejects.toThrow()

    const skipped = await run([...p.globals, 'hooks', 'test', 'PreToolUse'], { env })
    expect(skipped.code, skipped.stderr).toBe(0)
    expect(skipped.stderr).toContain('entry "hooks": its hooks are not approved and are not run')

    // With --json every line is typed, also when there is nothing to approve (said on stderr).
    const plain = path.join(p.dir, 'plain.yml')
    await writeFile(plain, "- id: session\n  name: '@goalkeeper/session'\n")
    const none = await run(['--cwd', p.workspace, '--config', plain, '--json', 'hooks', 'approve'], { env })
    expect(none.code, none.stderr).toBe(0)
    expect(none.stdout).toBe('')
    expect(none.stderr).toContain(`nothing to approve: no hooks in ${plain}`)
    expect(jsonLines((await run([...p.globals, '--json', 'hooks'], { env })).stdout)).toMatchObject([{ type: 'hooks', file: p.yml, entries: [{ id: 'hooks', trust: 'unapproved' }] }])

    const approved = await run([...p.globals, 'hooks', 'approve'], { env })
    expect(approved.code, approved.stderr).toBe(0)
    expect(approved.stdout).toContain(`approved: these hooks of ${p.yml} run from the next start on (recorded in ${path.join(configHome, 'goalkeeper', 'hooks-approved.json')})`)
    expect((await run([...p.globals, 'hooks'], { env })).stdout).toContain('2 hooks, which run: approved')
    const again = jsonLines((await run([...p.globals, '--json', 'hooks', 'approve'], { env })).stdout)
    expect(again.map((line) => line.type)).toEqual(['hooks', 'hooks-approved'])
    expect(again[1]).toEqual({ type: 'hooks-approved', file: p.yml, record: path.join(configHome, 'goalkeeper', 'hooks-approved.json') })

    const tested = await run([...p.globals, 'hooks', 'test', 'before-tool-call'], { env })
    expect(tested.code, tested.stderr).toBe(0)
    expect(tested.stdout).toMatch(new RegExp(`^PreToolUse hook "${guard}": exit 2 in \\d+ ms: blocked; block: not in this repository\\n  stderr: not in this repository\\n$`))

    const ran = await run([...p.globals, '--json', 'run', 'clean up'], { env })
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stdout).toContain('The call was denied by hooks: not in this repository')
    expect(await readFile(marker, 'utf8')).toBe('')
  })
})
