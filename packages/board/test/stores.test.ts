// One board over several projects: `goalkeeper board --project DIR --project DIR` as a child process, each
// project's goals run by the CLI in that project, only the model scripted.
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { CLI_TIMEOUT, compositionYml, run, sessionIdOf, useProject } from '@goalkeeper/test-kit'
import { startBoardChild } from './browser.ts'

const project = useProject()

const SCRIPT = 'export default many((request) => completeGoal(request))'

describe('a board over several projects', { timeout: CLI_TIMEOUT }, () => {
  it("lists the goals of every --project, each from that project's own store", async () => {
    const p = await project({ script: SCRIPT })
    // A second project beside the first, with its own cordis.yml and session directory.
    const second = path.join(p.dir, 'second')
    const other = { dir: second, workspace: path.join(second, 'workspace'), sessions: path.join(second, 'sessions'), yml: path.join(second, 'cordis.yml') }
    await mkdir(other.workspace, { recursive: true })
    await writeFile(other.yml, compositionYml({ sessions: other.sessions, script: p.script }))
    const first = await run([...p.globals, 'goal', 'Finish the first'])
    expect(first.code, first.stderr).toBe(0)
    const next = await run(['--cwd', other.workspace, '--config', other.yml, 'goal', 'Finish the second'])
    expect(next.code, next.stderr).toBe(0)

    const { url, child } = await startBoardChild(p, ['--project', p.dir, '--project', second])
    expect(child.stderr()).toContain(`board of ${p.sessions}`)
    expect(child.stderr()).toContain(`board of ${other.sessions}`)
    const token = new URL(url).searchParams.get('token')!
    const page = (await (await fetch(new URL('/api/overview', url), { headers: { 'x-board-token': token } })).json()) as { rows: { session: string; objective: string }[] }
    expect(page.rows.map((row) => [row.session, row.objective]).sort()).toEqual([
      [sessionIdOf(first.stderr), 'Finish the first'],
      [sessionIdOf(next.stderr), 'Finish the second'],
    ].sort())
    // A goal page opens from whichever store holds the session.
    expect((await fetch(new URL(`/api/goal/${sessionIdOf(next.stderr)}`, url), { headers: { 'x-board-token': token } })).status).toBe(200)
  })

  it('refuses a --project that is not a directory (exit 64)', async () => {
    const p = await project({ script: SCRIPT })
    const missing = path.join(p.dir, 'nowhere')
    const result = await run([...p.globals, 'board', '--project', missing])
    expect(result.code).toBe(64)
    expect(result.stderr).toContain(`goalkeeper: board: --project ${missing}: not a directory`)
  })
})
