// Sessions belong to the project (the git top level, else the directory): every command finds them from
// any subdirectory, `sessions --all` lists every project's, an id is found from anywhere, and sessions
// kept per exact directory before stay readable. The store is the default one, under XDG_STATE_HOME.
import { execFile } from 'node:child_process'
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { defaultSessionsDir, projectRoot, workspaceKey } from '@goalkeeper/session'
import { CLI_TIMEOUT, compositionYml, run, sessionIdOf, start, useProject, type Project } from '@goalkeeper/test-kit'

const exec = promisify(execFile)
const project = useProject()
const script = 'export default many((request) => ({ text: "heard: " + textOf(request.messages.filter((m) => m.role === "user").at(-1)) }))'

interface Layout {
  p: Project
  env: Record<string, string>
  app: string
  src: string
  other: string
  /** Global options running in `dir` on the default store. */
  at: (dir: string) => string[]
}

/** A git repository `app` with a subdirectory `src`, and an unrelated directory `other`, on the default store. */
async function layout(): Promise<Layout> {
  const p = await project({ script, config: { session: { dir: '' } } })
  const app = path.join(p.dir, 'app')
  const src = path.join(app, 'src', 'deep')
  const other = path.join(p.dir, 'other')
  await mkdir(src, { recursive: true })
  await mkdir(other)
  await exec('git', ['init', '-q', app])
  const env = { XDG_STATE_HOME: path.join(p.dir, 'state') }
  return { p, env, app, src, other, at: (dir) => ['--cwd', dir, '--config', p.yml] }
}

describe('sessions by project', () => {
  it('the project root is the git top level, else the directory itself', async () => {
    const { app, src, other } = await layout()
    expect(projectRoot(src)).toBe(app)
    expect(projectRoot(app)).toBe(app)
    expect(projectRoot(other)).toBe(other)
  })

  it('a session started at the top is listed, shown and continued with --last from a subdirectory', async () => {
    const { env, app, src, at } = await layout()
    const first = await run([...at(app), 'run', 'first words'], { env })
    expect(first.code, first.stderr).toBe(0)
    const id = sessionIdOf(first.stderr)

    const listed = await run([...at(src), 'sessions'], { env })
    expect(listed.code, listed.stderr).toBe(0)
    expect(listed.stdout).toContain(id)

    const shown = await run([...at(src), 'show', '--last'], { env })
    expect(shown.code, shown.stderr).toBe(0)
    expect(shown.stdout).toContain(`session ${id}, started`)
    expect(shown.stdout).toContain('first words')
    const byId = await run([...at(src), 'show', id.slice(-6)], { env })
    expect(byId.stdout).toBe(shown.stdout)

    const resumed = await run([...at(src), 'resume', '--last', 'second', 'words'], { env })
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(resumed.stderr).toContain(`goalkeeper: session ${id} (resumed)`)
    expect(resumed.stdout).toBe('heard: second words\n')

    const chat = start([...at(src), 'chat', '--last'], { stdin: 'pipe', env })
    chat.child.stdin!.end('third words\n')
    expect(await chat.exited(), chat.stderr()).toBe(0)
    expect(chat.stderr()).toContain(`goalkeeper: session ${id} (resumed)`)
    expect(chat.stdout()).toContain('heard: third words')
  }, CLI_TIMEOUT)

  it('--last of resume, chat and show says so when the project has no session, and refuses a second name', async () => {
    const { env, other, at } = await layout()
    for (const args of [['resume', '--last'], ['chat', '--last'], ['show', '--last']]) {
      const result = await run([...at(other), ...args], { env })
      expect({ args, code: result.code }).toEqual({ args, code: 64 })
      expect(result.stderr).toContain(`goalkeeper: --last: no saved session of ${other}`)
    }
    const both = await run([...at(other), 'show', '--last', 'abc'], { env })
    expect(both.code).toBe(64)
    expect(both.stderr).toContain('--last and an id both name a session')
    const neither = await run([...at(other), 'resume'], { env })
    expect(neither.code).toBe(64)
    expect(neither.stderr).toContain('resume needs the session: its id, or --last')
    const chatBoth = await run([...at(other), 'chat', '--last', '--session', 'abc'], { env })
    expect(chatBoth.code).toBe(64)
    expect(chatBoth.stderr).toContain('--last, --session and --resume each name a session')
  }, CLI_TIMEOUT)

  it('another project finds a session by its full id or a unique part, and sessions --all lists every project with its directory', async () => {
    const { env, app, other, at } = await layout()
    const mine = sessionIdOf((await run([...at(app), 'run', 'in the app'], { env })).stderr)
    const theirs = sessionIdOf((await run([...at(other), 'run', 'elsewhere'], { env })).stderr)

    const here = await run([...at(other), 'sessions'], { env })
    expect(here.stdout).toContain(theirs)
    expect(here.stdout).not.toContain(mine)

    for (const name of [mine, mine.slice(-6), mine.slice(0, -2)]) {
      const shown = await run([...at(other), 'show', name], { env })
      expect({ name, code: shown.code, stderr: shown.stderr }).toEqual({ name, code: 0, stderr: '' })
      expect(shown.stdout).toContain(`session ${mine}, started`)
      expect(shown.stdout).toContain(`in ${app}`)
    }
    // Continued where it belongs: the session's own directory stays its workspace.
    const resumed = await run([...at(other), 'resume', mine, 'from elsewhere'], { env })
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(resumed.stderr).toContain(`goalkeeper: session ${mine} (resumed) in ${app}`)

    const all = await run([...at(other), 'sessions', '--all'], { env })
    expect(all.code, all.stderr).toBe(0)
    expect(all.stdout.split('\n')[0]).toMatch(/\bDIRECTORY\b/)
    const row = (id: string) => all.stdout.split('\n').find((line) => line.startsWith(id)) ?? ''
    expect(row(mine)).toContain(app)
    expect(row(theirs)).toContain(other)
    const json = await run([...at(other), '--json', 'sessions', '--all'], { env })
    expect(json.stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line).id).sort()).toEqual([mine, theirs].sort())

    const unknown = await run([...at(other), 'show', 'zzzzzz'], { env })
    expect(unknown.code).toBe(64)
    expect(unknown.stderr).toContain('goalkeeper: no session "zzzzzz" in ')
    expect(unknown.stderr).toContain("or any other project's sessions")
  }, CLI_TIMEOUT)

  it('a session kept per exact directory before is still listed, shown and continued from that directory', async () => {
    const { p, env, app, src, at } = await layout()
    // The layout before: a store per directory, keyed by the subdirectory itself.
    const older = defaultSessionsDir(src, { XDG_STATE_HOME: env.XDG_STATE_HOME })
    expect(path.basename(older)).toBe(workspaceKey(src))
    const yml = path.join(p.dir, 'older.yml')
    await writeFile(yml, compositionYml({ sessions: older, script: p.script }))
    const before = await run(['--cwd', src, '--config', yml, 'run', 'kept before'], { env })
    expect(before.code, before.stderr).toBe(0)
    const id = sessionIdOf(before.stderr)

    const listed = await run([...at(src), 'sessions'], { env })
    expect(listed.stdout).toContain(id)
    const last = await run([...at(src), 'show', '--last'], { env })
    expect(last.stdout).toContain(`session ${id}, started`)
    const fromTop = await run([...at(app), 'show', id], { env })
    expect(fromTop.code, fromTop.stderr).toBe(0)
    const resumed = await run([...at(src), 'resume', id, 'still here'], { env })
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(resumed.stdout).toBe('heard: still here\n')
  }, CLI_TIMEOUT)
})
