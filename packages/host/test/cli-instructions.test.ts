// AGENTS.md through the real CLI, and the user-level composition in $XDG_CONFIG_HOME/goalkeeper/.
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { CLI_TIMEOUT, run, useProject } from '@goalkeeper/test-kit'

const project = useProject()

/** The model says which instructions reached its system prompt. */
const reportRules = `export default many((request) => ({
  text: 'rules: ' + (['USER RULE', 'APP RULE'].filter((rule) => request.system.includes(rule)).join(', ') || 'none'),
}))`

describe('project instructions and the user-level composition', { timeout: CLI_TIMEOUT }, () => {
  it('AGENTS.md of the workspace reaches the system prompt; --no-project-instructions leaves it out', async () => {
    const p = await project({ script: reportRules })
    await writeFile(path.join(p.workspace, 'AGENTS.md'), 'APP RULE: run the tests\n')
    const [withRules, without] = await Promise.all([
      run([...p.globals, 'run', 'hello']),
      run([...p.globals, '--no-project-instructions', 'run', 'hello']),
    ])
    expect(withRules.code, withRules.stderr).toBe(0)
    expect(withRules.stdout).toBe('rules: APP RULE\n')
    expect(without.code, without.stderr).toBe(0)
    expect(without.stdout).toBe('rules: none\n')
  })

  it('a workspace without cordis.yml uses $XDG_CONFIG_HOME/goalkeeper/cordis.yml and the user AGENTS.md', async () => {
    const p = await project({ script: reportRules })
    const xdg = path.join(p.dir, 'xdg')
    await mkdir(path.join(xdg, 'goalkeeper'), { recursive: true })
    // The project's composition, moved to the user directory; the workspace has none of its own.
    await writeFile(path.join(xdg, 'goalkeeper', 'cordis.yml'), await readFile(p.yml, 'utf8'))
    await writeFile(path.join(xdg, 'goalkeeper', 'AGENTS.md'), 'USER RULE: be brief\n')
    const result = await run(['--cwd', p.workspace, 'run', 'hello'], { env: { XDG_CONFIG_HOME: xdg } })
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toBe('rules: USER RULE\n')
    const check = await run(['--cwd', p.workspace, 'check'], { env: { XDG_CONFIG_HOME: xdg } })
    expect(check.code, check.stderr).toBe(0)
    expect(check.stdout + check.stderr).toContain(path.join(xdg, 'goalkeeper', 'cordis.yml'))
  })
})
