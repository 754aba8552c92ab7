// Human output fits 80 columns: the commands run as a child process with COLUMNS=80 and their output
// piped (80 is also the width the CLI assumes then), and every line of stdout and stderr is measured.
// Content that cannot be cut is excepted by name below, with the reason.
import { describe, expect, it } from 'vitest'
import { CLI_TIMEOUT, run, sessionIdOf, useProject } from '@goalkeeper/test-kit'

const project = useProject()
const WIDTH = 80
const script = 'export default many(() => ({ text: "done: the notes are written and the check passes" }))'
const PERMISSIONS = "- id: permissions\n  name: '@goalkeeper/permissions'\n  config:\n    mode: ${GOALKEEPER_PERMISSIONS:-workspace-write}\n"
const OBJECTIVE = 'write the notes of this project down in a file called NOTES.md, one line per package'

/** Lines that stay whole however long they are. */
const UNCUTTABLE: { pattern: RegExp; reason: string }[] = [
  // `goalkeeper --cwd <dir> --config <file> show <id>`: a command a person copies; a line break would break it.
  { pattern: /^goalkeeper: [^:]+: (npx )?goalkeeper --cwd \S+ --config \S+ \S+/, reason: 'a command to copy' },
]

function tooLong(label: string, output: string): string[] {
  return output
    .split('\n')
    .filter((line) => Array.from(line).length > WIDTH && !UNCUTTABLE.some(({ pattern }) => pattern.test(line)))
    .map((line) => `${label} (${Array.from(line).length}): ${line}`)
}

const env = { COLUMNS: String(WIDTH) }

describe('human output fits 80 columns', { timeout: CLI_TIMEOUT }, () => {
  it('run, sessions, sessions --all, check and the --help of every command', async () => {
    const p = await project({ script, extraYml: PERMISSIONS })
    const long: string[] = []
    const take = async (label: string, args: string[]) => {
      const result = await run(args, { env })
      long.push(...tooLong(label, result.stdout), ...tooLong(label, result.stderr))
      return result
    }
    const first = await take('run', [...p.globals, 'run', OBJECTIVE])
    expect(first.code, first.stderr).toBe(0)
    // The header's permissions line is one of those measured.
    expect(first.stderr).toMatch(/^goalkeeper: permissions workspace-write /m)
    await take('run --permissions read-only', [...p.globals, '--permissions', 'read-only', 'run', OBJECTIVE])
    const sessions = await take('sessions', [...p.globals, 'sessions'])
    // Long titles are what sessions shortens: the cut is marked.
    expect(sessions.stdout).toContain('…')
    expect(sessions.stdout).toContain(sessionIdOf(first.stderr))
    const all = await take('sessions --all', [...p.globals, 'sessions', '--all'])
    expect(all.stdout).toMatch(/^ID .* DIRECTORY +TITLE$/m)
    const check = await take('check', [...p.globals, 'check'])
    expect(check.stdout).toMatch(/^sandbox: /m)
    const help = await take('--help', ['--help'])
    const commands = [...help.stdout.matchAll(/^ {2}([a-z][a-z-]*)\b/gm)].map((match) => match[1]).filter((name) => name !== 'help')
    expect(commands).toEqual(expect.arrayContaining(['run', 'goal', 'chat', 'sessions', 'show', 'check']))
    for (const command of commands) await take(`${command} --help`, [command, '--help'])
    expect(long).toEqual([])
  })

  it('sessions fits a wider terminal too, and keeps the columns it drops at 80', async () => {
    const p = await project({ script })
    const first = await run([...p.globals, 'run', OBJECTIVE])
    expect(first.code, first.stderr).toBe(0)
    const narrow = await run([...p.globals, 'sessions'], { env })
    const wide = await run([...p.globals, 'sessions'], { env: { COLUMNS: '200' } })
    const narrower = await run([...p.globals, 'sessions'], { env: { COLUMNS: '60' } })
    // At 80 columns the title is cut; at 60 STARTED gives way too; at 200 every column is whole.
    expect(narrow.stdout).toMatch(/^ID +STARTED +LAST ACTIVITY +GOAL +TITLE$/m)
    expect(narrow.stdout).not.toContain(OBJECTIVE.slice(0, 30))
    expect(narrower.stdout).toMatch(/^ID +LAST ACTIVITY +GOAL +TITLE$/m)
    for (const line of narrower.stdout.split('\n')) expect(Array.from(line).length, line).toBeLessThanOrEqual(60)
    expect(wide.stdout).toMatch(/^ID +STARTED +LAST ACTIVITY +GOAL +TITLE$/m)
    // The title's own cap (60 characters) still holds.
    expect(wide.stdout).toContain(`${OBJECTIVE.slice(0, 59)}…`)
    for (const line of narrow.stdout.split('\n')) expect(Array.from(line).length, line).toBeLessThanOrEqual(WIDTH)
  })
})
