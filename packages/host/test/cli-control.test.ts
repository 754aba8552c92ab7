// `goalkeeper pause` and `resume` of a session another process holds, through that process's control socket:
// the CLI as a child process against a real `goalkeeper goal` child, only the model scripted.
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { CLI_TIMEOUT, jsonLines, readSession, run, sessionIdOf, start, useProject } from '@goalkeeper/test-kit'

const project = useProject()

// Each round's first answer waits for the file go-N, so the goal is mid-round while the controls arrive.
const SCRIPT = `
export default many(async (request) => {
  const round = roundOf(request)
  if (turnResults(request).length) return { text: 'Round ' + round + ' done.' }
  say('round ' + round + ' waits')
  await released('go-' + round)
  return { text: 'Round ' + round + ' working.', toolCalls: [{ name: 'list_dir', arguments: {} }] }
}, 400)
`

const CONTROL = `- id: control
  name: '@goalkeeper/control'
`

async function running(extraYml = CONTROL) {
  const p = await project({ script: SCRIPT, extraYml })
  const env = { GOALKEEPER_CONTROL_DIR: path.join(p.dir, 'control') }
  const goal = start([...p.globals, 'goal', 'Take your time', '--max-rounds', '3'], { env })
  await goal.waitFor('stderr', /script: round 1 waits\n/)
  const id = sessionIdOf(goal.stderr())
  const cli = (...args: string[]) => run([...p.globals, ...args], { env })
  return { p, goal, id, cli }
}

describe('goalkeeper pause and resume reach the process that holds the session', { timeout: CLI_TIMEOUT }, () => {
  it('pause pauses the goal in the `goal` process (exit 3 there), recorded with the CLI as its source; then nothing holds it', async () => {
    const { p, goal, id, cli } = await running()
    const paused = await cli('pause', id)
    expect([paused.code, paused.stderr]).toEqual([0, ''])
    expect(paused.stdout).toBe(`paused session ${id} in process ${goal.child.pid} (goal paused, revision 2)\n`)
    await writeFile(path.join(p.dir, 'go-1'), '')
    expect(await goal.exited(), goal.stderr()).toBe(3)
    const records = await readSession(p, id)
    expect(records.filter((record) => record.type === 'control/applied').map((record) => record.data)).toEqual([{ action: 'pause', source: 'cli', revision: 2 }])
    expect(records.filter((record) => record.type === 'goal/change').at(-1)!.data.goal.phase).toBe('paused')

    const again = await cli('pause', id)
    expect([again.code, again.stdout]).toEqual([9, ''])
    expect(again.stderr).toMatch(new RegExp(`^goalkeeper: no goalkeeper process on this machine has session ${id} open: .*\\(hint: a fleet goal: .*pause ${id} --database URL\\)\\n$`))
  })

  it('--json prints one control line, as the schema documents it', async () => {
    const { p, goal, id, cli } = await running()
    const paused = await cli('--json', 'pause', id)
    expect(paused.code, paused.stderr).toBe(0)
    const [line] = jsonLines(paused.stdout)
    expect(line).toMatchObject({ type: 'control', session: id, action: 'pause', pid: goal.child.pid, worker: null, job: null, goal: { phase: 'paused' } })
    await writeFile(path.join(p.dir, 'go-1'), '')
    expect(await goal.exited(), goal.stderr()).toBe(3)
  })

  it('resume of a session a live process holds sends it a resume control instead of failing as locked: refused for a running goal (exit 8)', async () => {
    const { p, goal, id, cli } = await running()
    const resumed = await cli('resume', id)
    expect([resumed.code, resumed.stdout]).toEqual([8, ''])
    expect(resumed.stderr).toMatch(/^goalkeeper: resume refused: .* \(GOAL_INVALID_TRANSITION\)\n$/)
    // Nothing was applied: the goal runs on to its round cap.
    for (const round of [1, 2, 3]) await writeFile(path.join(p.dir, `go-${round}`), '')
    expect(await goal.exited(), goal.stderr()).toBe(4)
    expect((await readSession(p, id)).filter((record) => record.type === 'control/applied')).toEqual([])
  })

  it('a holder without the control plugin: resume fails as locked, as before, and pause says nothing holds it', async () => {
    const { p, goal, id, cli } = await running('')
    const resumed = await cli('resume', id)
    expect(resumed.code).toBe(64)
    expect(resumed.stderr).toMatch(new RegExp(`^goalkeeper: session ${id} is open for writing by `))
    const paused = await cli('pause', id)
    expect(paused.code).toBe(9)
    for (const round of [1, 2, 3]) await writeFile(path.join(p.dir, `go-${round}`), '')
    expect(await goal.exited(), goal.stderr()).toBe(4)
  })

  it('a holder killed with SIGKILL left its note behind: pause says the process is gone (exit 10)', async () => {
    const { goal, id, cli } = await running()
    goal.child.kill('SIGKILL')
    await goal.exit
    const paused = await cli('pause', id)
    expect([paused.code, paused.stdout]).toEqual([10, ''])
    expect(paused.stderr).toBe(`goalkeeper: the process that ran session ${id} (pid ${goal.child.pid}) is gone\n`)
  })
})
