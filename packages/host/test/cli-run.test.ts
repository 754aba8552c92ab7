import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { CLI_TIMEOUT, hint, jsonLines, readSession, run, sessionIdOf, snapshot, useProject } from '@goalkeeper/test-kit'

const project = useProject()

// A first prompt reads hello.txt; any later prompt gets back the user messages the model was sent.
const readThenRecall = `export default many((request) => {
  const users = request.messages.filter((message) => message.role === 'user').map(textOf)
  if (roundOf(request)) return { text: 'Working on the goal.' }
  if (users.length > 1) return { text: 'History: ' + users.join(' | ') }
  const read = turnResults(request).find((result) => result.name === 'read_file')
  if (!read) return { text: 'Reading.', toolCalls: [{ name: 'read_file', arguments: { path: 'hello.txt' } }] }
  return { text: 'The file says: ' + read.content.replace(/^\\s*1\\t/, '') }
})`

describe('goalkeeper run, resume, sessions and show', { timeout: CLI_TIMEOUT }, () => {
  it('run prints the final answer; resume and run --session continue the saved session with its history', async () => {
    const p = await project({ script: readThenRecall })
    await writeFile(path.join(p.workspace, 'hello.txt'), 'hi there')
    const first = await run([...p.globals, 'run', 'Read', 'hello.txt'])
    expect(first.code, first.stderr).toBe(0)
    expect(first.stdout).toBe('The file says: hi there\n')
    const id = sessionIdOf(first.stderr)
    expect(first.stderr).toContain(`goalkeeper: session ${id} (new) in ${p.workspace}\n`)
    expect(first.stderr).toContain('\n  read_file {"path":"hello.txt"}\n')
    expect(first.stderr).not.toContain('The file says')

    // A new process: the history reaches the model from the session file.
    const second = await run([...p.globals, 'resume', id, 'What did I ask?'])
    expect(second.code, second.stderr).toBe(0)
    expect(second.stderr).toContain(`goalkeeper: session ${id} (resumed)`)
    expect(second.stdout).toBe('History: Read hello.txt | What did I ask?\n')
    const third = await run([...p.globals, 'run', '--session', id.slice(-6), 'And', 'now?'])
    expect(third.code, third.stderr).toBe(0)
    expect(third.stdout).toBe('History: Read hello.txt | What did I ask? | And now?\n')
    const turns = (await readSession(p, id)).filter((record) => record.type === 'turn/end')
    expect(turns.map((record) => [record.data.turn, record.data.outcome.kind])).toEqual([[1, 'completed'], [2, 'completed'], [3, 'completed']])
  })

  it('sessions and show list and render saved sessions without writing; resume reports a disarmed goal', async () => {
    const p = await project({ script: readThenRecall })
    await writeFile(path.join(p.workspace, 'hello.txt'), 'hi there')
    const chatRun = await run([...p.globals, 'run', 'Read hello.txt'])
    const goalRun = await run([...p.globals, 'goal', 'Summarise the workspace', '--max-rounds', '1'])
    expect([chatRun.code, goalRun.code], goalRun.stderr).toEqual([0, 4])
    const [plain, goal] = [sessionIdOf(chatRun.stderr), sessionIdOf(goalRun.stderr)]

    const before = await snapshot(p)
    const [table, listJson, shownPlain, shownGoal, shownJson] = await Promise.all([
      // Wide enough that no column is left out or cut (cli-columns tests 80).
      run([...p.globals, 'sessions'], { env: { COLUMNS: '400' } }),
      run([...p.globals, '--json', 'sessions']),
      run([...p.globals, 'show', plain]),
      run([...p.globals, 'show', goal.slice(-6)]),
      run([...p.globals, '--json', 'show', goal]),
    ])
    expect(await snapshot(p)).toEqual(before)
    for (const result of [table, listJson, shownPlain, shownGoal, shownJson]) expect(result.code, result.stderr).toBe(0)

    const rows = table.stdout.trimEnd().split('\n')
    expect(rows[0]).toMatch(/^ID\s+STARTED\s+LAST ACTIVITY\s+GOAL\s+TITLE$/)
    expect(rows).toHaveLength(3)
    const rowOf = (id: string) => rows.find((row) => row.startsWith(id))!
    expect(rowOf(goal)).toMatch(/ blocked \(round-limit\) 1\/1 +goal: Summarise the workspace$/)
    expect(rowOf(plain)).toMatch(/\d{4}-\d\d-\d\d \d\d:\d\d  \d{4}-\d\d-\d\d \d\d:\d\d  - +Read hello\.txt$/)

    const listed = jsonLines(listJson.stdout)
    expect(listed.map((item) => item.id).sort()).toEqual([plain, goal].sort())
    expect(listed.find((item) => item.id === goal)).toMatchObject({ goal: { phase: 'blocked', roundsStarted: 1, maxGoalRounds: 1, blockedReason: { code: 'round-limit' } } })
    expect(listed.find((item) => item.id === plain)).toMatchObject({ title: 'Read hello.txt', goal: null, cwd: p.workspace })

    expect(shownPlain.stdout).toContain(`session ${plain}, started `)
    for (const part of ['\nturn 1  ', '\n  user: Read hello.txt\n', '\n  tool read_file {"path":"hello.txt"}\n', '\n    ->      1\thi there\n', '\n  assistant: The file says: hi there\n', '\n  turn 1 completed\n']) {
      expect(shownPlain.stdout).toContain(part)
    }
    expect(shownGoal.stdout).toContain('\n  goal set: "Summarise the workspace" (at most 1 round)\n')
    expect(shownGoal.stdout).toContain('\n  goal round 1 (objective "Summarise the workspace")\n')
    expect(shownGoal.stdout).toContain('\n  goal blocked after round 1/1: round-limit: ')
    const goalRecords = await readSession(p, goal)
    expect(jsonLines(shownJson.stdout)).toEqual([{ type: 'integrity', integrity: { state: 'signed', lines: goalRecords.length, unsignedPrefix: 0 } }, ...goalRecords.map((record) => ({ type: 'record', session: goal, record }))])

    // Resume without a prompt: nothing is pending; the goal is reported disarmed, with the command to continue it.
    const resumed = await run([...p.globals, 'resume', goal])
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(resumed.stdout).toBe('')
    expect(resumed.stderr).toContain('goalkeeper: the session has a goal, loaded disarmed (blocked, 1/1 rounds): "Summarise the workspace"\n')
    expect(resumed.stderr).toContain('goalkeeper: nothing to run: the session has no unanswered input')
    expect(resumed.stderr).toContain(`goalkeeper: to give the goal more rounds: ${hint(p)} goal --session ${goal} --max-rounds 6\n`)
  })

  it('a failed turn exits 70; unknown sessions exit 64; secrets are masked; every command has --help and --version', async () => {
    const p = await project({
      script: `export default many((request) => opening(request).text.startsWith('echo')
        ? { text: 'You said: ' + opening(request).text }
        : { kind: 'error', code: 'AUTH', message: 'the key was refused' })`,
    })
    const secret = { DEMO_SERVICE_TOKEN: 'tok-5f3a9c1e77' }
    const [failed, echoed, unknown, goalHelp, chatHelp, version] = await Promise.all([
      run([...p.globals, 'run', 'hello']),
      run([...p.globals, '--json', 'run', 'echo tok-5f3a9c1e77'], { env: secret }),
      run([...p.globals, 'show', 'no-such-session']),
      run(['goal', '--help']),
      run(['chat', '--help']),
      run(['run', '--version']),
    ])
    expect(failed.code, failed.stderr).toBe(70)
    expect(failed.stdout).toBe('')
    expect(failed.stderr).toContain('error in turn 1: AUTH: the key was refused\n')
    expect(echoed.code, echoed.stderr).toBe(0)
    expect(echoed.stdout).toContain('"answer":"You said: echo [redacted DEMO_SERVICE_TOKEN]"')
    expect(echoed.stdout + echoed.stderr).not.toContain('tok-5f3a9c1e77')
    expect(unknown.code).toBe(64)
    expect(unknown.stderr).toBe(`goalkeeper: no session "no-such-session" in ${p.sessions} or any other project's sessions (hint: \`${hint(p)} sessions\` lists them, \`${hint(p)} sessions --all\` every project's)\n`)
    expect(goalHelp.code).toBe(0)
    expect(goalHelp.stdout).toMatch(/^Usage: goalkeeper goal \[options\] \[objective\.\.\.\]/)
    for (const line of ['--max-rounds <n>', '--session <id>', 'Exit codes:', '  2    the goal is blocked', '  4    the goal ran out of rounds']) expect(goalHelp.stdout).toContain(line)
    expect(chatHelp.stdout).toContain('/goal pause | resume | clear')
    expect(version.code).toBe(0)
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+\n$/)
  })
})
