// Human output fits 80 columns: the commands run as a child process with COLUMNS=80 and their output
// piped (80 is also the width the CLI assumes then), and every line of stdout and stderr is measured.
// Content that cannot be cut is excepted by name below, with the reason.
import { describe, expect, it } from 'vitest'
import { CLI_TIMEOUT, run, sessionIdOf, useProject } from '@goalkeeper/test-kit'
import { startOnTerminal } from './on-terminal.ts'

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

// Long on purpose: a path, a command, file content, a check's output and a message all wider than 80 columns.
const LONG_PATH = `docs/${'packages-and-their-notes/'.repeat(3)}NOTES-of-every-package.md`
const LONG_COMMAND = `echo ${'the-output-of-a-command-that-goes-on-'.repeat(5)}end`
const CHECK = `test -f NOTES.md || { echo "${'NOTES.md is missing, and this line of the check says so at length; '.repeat(3)}"; exit 1; }`
const MESSAGE = `Looking around first. ${'This sentence of the message goes on past the eightieth column. '.repeat(3)}`
// A human turn runs the long command; goal round 1 writes a long file, runs the command, reads a missing
// file and completes before NOTES.md exists (the check refuses it); round 2 writes NOTES.md and completes.
const rounds = `const LONG = ${JSON.stringify({ LONG_PATH, LONG_COMMAND, MESSAGE })}
const usage = { inputTokens: 450, cachedInputTokens: 50, outputTokens: 100 }
export default many((request) => {
  const results = turnResults(request)
  const round = roundOf(request)
  const reply = (answer) => ({ ...answer, usage })
  if (round === 0) return reply(results.length ? { text: 'Ran it.' } : { toolCalls: [{ name: 'run_command', arguments: { command: LONG.LONG_COMMAND } }] })
  if (round === 1 && !results.length) {
    return reply({ text: LONG.MESSAGE, toolCalls: [
      { name: 'write_file', arguments: { path: LONG.LONG_PATH, content: 'first line\\n' + LONG.MESSAGE.repeat(2) + '\\nlast line\\n' } },
      { name: 'run_command', arguments: { command: LONG.LONG_COMMAND } },
      { name: 'read_file', arguments: { path: LONG.LONG_PATH.replace('NOTES', 'MISSING') } },
    ] })
  }
  if (round === 2 && !results.some((r) => r.name === 'write_file')) return reply({ toolCalls: [{ name: 'write_file', arguments: { path: 'NOTES.md', content: 'notes' } }] })
  if (results.some((r) => r.name === 'update_goal' && !r.ok)) return reply({ text: 'The check failed; next round.' })
  return reply(completeGoal(request))
})`

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

  it('goal with rounds, a failing check and a budget, and show of its session; piped without COLUMNS lines stay whole', async () => {
    const p = await project({ script: rounds, extraYml: PERMISSIONS })
    const long: string[] = []
    const goal = await run([...p.globals, 'goal', OBJECTIVE, '--verify', CHECK, '--token-budget', '100000', '--time-budget', '30m', '--max-rounds', '3'], { env })
    expect(goal.code, goal.stderr).toBe(0)
    long.push(...tooLong('goal', goal.stdout), ...tooLong('goal', goal.stderr))
    // Every kind of line was there to measure: rounds with their spend, each tool, the refused check, the diff.
    expect(goal.stderr).toMatch(/^round 2\/3 \(tokens [\d.]+k?\/100k, time \d+s\/30m\)$/m)
    expect(goal.stderr).toMatch(/^goal set: "write the .*…" \(at most 3 rounds; budget tokens 0\/100k, time 0s\/30m\)$/m)
    expect(goal.stderr).toMatch(/^ {2}run_command \{"command":"echo the-output.*…$/m)
    expect(goal.stderr).toMatch(/^ {2}ok write_file …\S*NOTES-of-every-package\.md: \+3 -0 lines$/m)
    expect(goal.stderr).toMatch(/^ {2}update_goal failed: GOAL_CHECK_FAILED: .*…$/m)
    expect(goal.stderr).toMatch(/^ {2}read_file failed: /m)
    expect(goal.stdout).toMatch(/^Spent: tokens [\d.]+k\/100k, time \d+s\/30m$/m)
    const id = sessionIdOf(goal.stderr)

    const shown = await run([...p.globals, 'show', id], { env })
    expect(shown.code, shown.stderr).toBe(0)
    long.push(...tooLong('show', shown.stdout), ...tooLong('show', shown.stderr))
    // The command is shortened, how it ended is not.
    expect(shown.stdout).toMatch(/^ {2}check `test -f NOTES\.md .*…` failed \(exit code 1\)$/m)
    expect(shown.stdout).toMatch(/^ {7}NOTES\.md is missing, .*…$/m)
    expect(shown.stdout).toMatch(/^goal spent: tokens /m)
    // A message is broken at spaces into indented lines, not cut: every word of it is there.
    const said = shown.stdout.split('\n').filter((line) => line.startsWith('  assistant: Looking') || /^ {4}\S/.test(line))
    expect(said.join(' ').replace(/\s+/g, ' ')).toContain(MESSAGE.trim())
    expect(long).toEqual([])

    // Piped without COLUMNS: one line per event, nothing cut (for grep and logs).
    const whole = await run([...p.globals, 'run', 'run the long command'], { env: { COLUMNS: undefined } })
    expect(whole.code, whole.stderr).toBe(0)
    expect(whole.stderr.split('\n')).toContain(`  run_command ${JSON.stringify({ command: LONG_COMMAND })}`)
    const full = await run([...p.globals, 'show', id], { env: { COLUMNS: undefined } })
    expect(full.stdout).toContain(`  tool run_command {"command":"${LONG_COMMAND.slice(0, 90)}`)
    expect(full.stdout).toContain(`  assistant: ${MESSAGE.trim()}`)
  })

  it('chat on an 80-column terminal: its event lines fit, a compaction included, and so does show of it', async () => {
    const p = await project({ script: rounds, extraYml: PERMISSIONS })
    const term = startOnTerminal([...p.globals, 'chat'], { columns: WIDTH })
    await term.until(/^>$/m)
    term.keys('run the long command\r')
    await term.until(/^Ran it\.$/m)
    await term.until(/\n>$/)
    term.keys('/compact\r')
    await term.until(/(compacted: |nothing compacted|compaction failed).*\n(.*\n)*>$/)
    term.keys('\x04')
    expect(await term.exit, term.screen().join('\n')).toBe(0)
    const screen = term.screen()
    expect(screen.join('\n')).toMatch(/^ {2}run_command \{"command":"echo the-output.*…$/m)
    expect(screen.join('\n')).toMatch(/^ {2}compacted: /m)
    const long = tooLong('chat', screen.join('\n'))
    // show of the chat's session: the compaction's lines and its summary fit too.
    const shown = await run([...p.globals, 'show', '--last'], { env })
    expect(shown.code, shown.stderr).toBe(0)
    expect(shown.stdout).toMatch(/^ {2}history compacted \(asked for with \/compact; /m)
    long.push(...tooLong('show', shown.stdout))
    expect(long).toEqual([])
  })
})
