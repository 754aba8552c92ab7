import { describe, expect, it } from 'vitest'
import { CLI_TIMEOUT, hint, jsonLines, readSession, run, sessionIdOf, snapshot, start, useProject } from '@goalkeeper/test-kit'

const project = useProject()

// Round 1 lists the workspace and fails one read; round 2 completes the goal through the goal tools.
const twoRounds = `export default many((request) => {
  if (roundOf(request) === 1) {
    if (!turnResults(request).length) return { text: 'Looking around.', toolCalls: [{ name: 'list_dir', arguments: {} }, { name: 'read_file', arguments: { path: 'missing.txt' } }] }
    return { text: 'Round one done; more next round.' }
  }
  return completeGoal(request)
})`

// Each case starts node + tsx (about a second, more on a busy machine).
describe('goalkeeper goal', { timeout: CLI_TIMEOUT }, () => {
  it('runs rounds to completion: answer and summary on stdout, progress on stderr, exit 0', async () => {
    const p = await project({ script: twoRounds })
    const { code, stdout, stderr } = await run([...p.globals, 'goal', 'Write', 'the', 'notes', '--max-rounds', '3'])
    expect(code, stderr).toBe(0)
    expect(stdout).toBe('Goal done: everything is verified.\nGoal complete (not verified) after 2/3 rounds: "Write the notes"\n')
    const id = sessionIdOf(stderr)
    const lines = stderr.split('\n')
    const order = ['goal set: "Write the notes" (at most 3 rounds)', 'goal armed: rounds run automatically', 'round 1/3', '  list_dir {}', '  read_file {"path":"missing.txt"}', 'round 2/3', '  get_goal {}', 'goal complete after round 2/3']
    expect(order.map((line) => lines.indexOf(line))).toEqual(order.map((line) => lines.indexOf(line)).sort((a, b) => a - b))
    expect(lines).toEqual(expect.arrayContaining(order))
    expect(stderr).toMatch(/\n {2}read_file failed: [A-Z_]+: .*missing\.txt/)
    expect(stderr).toContain(`goalkeeper: the session is saved; to read it: ${hint(p)} show ${id}\n`)
    const records = await readSession(p, id)
    expect(records.map((record) => record.seq)).toEqual(records.map((_, index) => index))
    expect(records.filter((record) => record.type === 'goal/change').map((record) => record.data.op)).toEqual(['create', 'complete'])
    expect(records[0].data.cwd).toBe(p.workspace)
  })

  it('--json: every stdout line is JSON: the session records from the header, goal changes, activation, the result', async () => {
    const p = await project({ script: twoRounds })
    const { code, stdout, stderr } = await run([...p.globals, '--json', 'goal', 'Write the notes', '--max-rounds', '3'])
    expect(code, stderr).toBe(0)
    const lines = jsonLines(stdout)
    const id = sessionIdOf(stderr)
    expect(new Set(lines.map((line) => line.type))).toEqual(new Set(['record', 'goal', 'activation', 'result']))
    const records = lines.filter((line) => line.type === 'record')
    expect(records.every((line) => line.session === id)).toBe(true)
    expect(records.map((line) => line.record)).toEqual(await readSession(p, id))
    expect(records[0].record.type).toBe('session/header')
    expect(lines.filter((line) => line.type === 'goal').map((line) => [line.op, line.goal.phase])).toEqual([['create', 'active'], ['complete', 'complete']])
    expect(lines.filter((line) => line.type === 'activation').map((line) => line.activation)).toEqual(['armed', 'disarmed'])
    expect(lines.at(-1)).toMatchObject({ type: 'result', session: id, exitCode: 0, answer: 'Goal done: everything is verified.', goal: { phase: 'complete', roundsStarted: 2 } })
    // Progress still goes to stderr, where it cannot break the JSON.
    expect(stderr).toContain('round 2/3')
  })

  it('a goal the model blocks exits 2 with the reason and the command to retry, even when it names a driver code', async () => {
    const p = await project({
      config: { 'tool-goal': { blockedThreshold: 0 } },
      script: `export default many((request) => {
        const results = turnResults(request)
        const read = results.find((result) => result.name === 'get_goal')
        if (results.some((result) => result.name === 'update_goal')) return { text: 'Blocked: I need the deploy key.' }
        if (!read) return { toolCalls: [{ name: 'get_goal', arguments: {} }] }
        const goal = JSON.parse(read.content).goal
        return { toolCalls: [{ name: 'update_goal', arguments: { goal_id: goal.goal_id, revision: goal.revision, action: 'block', reason: { code: 'round-limit', message: 'The deploy key is missing.' } } }] }
      })`,
    })
    const { code, stdout, stderr } = await run([...p.globals, 'goal', 'Deploy the site'])
    // The model cannot claim the driver's round-limit: not "out of rounds", not exit 4.
    expect(code, stderr).toBe(2)
    expect(stdout).toBe('Blocked: I need the deploy key.\nGoal blocked (model-reported) after 1/256 rounds: "Deploy the site"\nround-limit: The deploy key is missing.\n')
    expect(stderr).toContain('goal blocked after round 1/256: model-reported: round-limit: The deploy key is missing.\n')
    expect(stderr).not.toContain('more rounds')
    expect(stderr).toContain(`to retry the goal once the blocker is resolved: ${hint(p)} goal --session ${sessionIdOf(stderr)}\n`)
  })

  it('out of rounds exits 4; goal --session with a higher --max-rounds resumes it to completion', async () => {
    const p = await project({ script: 'export default many((request) => (roundOf(request) >= 3 ? completeGoal(request) : { text: `Still working (round ${roundOf(request)}).` }))' })
    const first = await run([...p.globals, 'goal', 'Finish the report', '--max-rounds', '2'])
    expect(first.code, first.stderr).toBe(4)
    const id = sessionIdOf(first.stderr)
    expect(first.stdout).toMatch(/^Still working \(round 2\)\.\nGoal out of rounds after 2\/2 rounds: "Finish the report"\n/)
    expect(first.stderr).toContain(`to give the goal more rounds: ${hint(p)} goal --session ${id} --max-rounds 7\n`)

    // Resuming at the cap is refused with the same exit code and hint; raising the cap resumes.
    const refused = await run([...p.globals, 'goal', '--session', id])
    expect(refused.code, refused.stderr).toBe(4)
    expect(refused.stderr).toContain('cannot resume the goal')
    const resumed = await run([...p.globals, 'goal', '--session', id.slice(-6), '--max-rounds', '3'])
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(resumed.stderr).toContain(`goalkeeper: session ${id} (resumed)`)
    expect(resumed.stderr).toContain('the session has a goal, loaded disarmed (blocked, 2/2 rounds)')
    expect(resumed.stderr).toMatch(/goal edited: .*\ngoal resumed after round 2\/3\ngoal armed: rounds run automatically\nround 3\/3\n/)
    expect(resumed.stdout).toBe('Goal done: everything is verified.\nGoal complete (not verified) after 3/3 rounds: "Finish the report"\n')
    const ops = (await readSession(p, id)).filter((record) => record.type === 'goal/change').map((record) => record.data.op)
    expect(ops).toEqual(['create', 'block', 'edit', 'resume', 'complete'])
  })

  it('configuration and usage errors exit 64 with one line and a hint, nothing on stdout', async () => {
    const p = await project({ script: twoRounds, config: { 'loop-guard': { softThreshold: 4, hardThreshold: 2 } } })
    const [badEntry, noObjective, badRounds] = await Promise.all([
      run([...p.globals, 'goal', 'Anything']),
      run([...p.globals, 'goal']),
      run([...p.globals, 'goal', 'Anything', '--max-rounds', 'zero']),
    ])
    for (const result of [badEntry, noObjective, badRounds]) {
      expect(result.code, result.stderr).toBe(64)
      expect(result.stdout).toBe('')
      expect(result.stderr).not.toMatch(/\n\s+at /)
    }
    // One line: the loader's own error line for the entry is not repeated above it.
    expect(badEntry.stderr).toMatch(/^goalkeeper: [^\n]*cordis\.yml: an entry did not load: entry "loop-guard": [^\n]*hardThreshold[^\n]* \(hint: [^\n]*\)\n$/)
    expect(badEntry.stderr).toContain(`(hint: fix it or mark it \`disabled: true\`; \`${hint(p)} check\` lists every entry)`)
    expect(noObjective.stderr).toBe(`goalkeeper: the objective is missing (hint: ${hint(p)} goal "<objective>" (or --session <id> to resume a saved goal))\n`)
    expect(badRounds.stderr).toBe("goalkeeper: option '--max-rounds <n>' argument 'zero' is invalid: expected a positive whole number (hint: see goalkeeper goal --help)\n")
  })

  it('SIGINT during a round pauses the goal (exit 3); the session stays intact, replayable and resumable', async () => {
    const p = await project({
      script: `export default many((request) => {
        if (roundOf(request) === 1) {
          if (!turnResults(request).length) return { text: 'Listing.', toolCalls: [{ name: 'list_dir', arguments: {} }] }
          say('hanging in round 1')
          return { kind: 'hang' }
        }
        return completeGoal(request)
      })`,
    })
    const handle = start([...p.globals, 'goal', 'Tidy the workspace', '--max-rounds', '3'])
    await handle.waitFor('stderr', /script: hanging in round 1\n/)
    handle.child.kill('SIGINT')
    expect(await handle.exited(), handle.stderr()).toBe(3)
    const id = sessionIdOf(handle.stderr())
    expect(handle.stderr()).toContain('goalkeeper: Ctrl-C: cancelled the running turn (Ctrl-C again to shut down)\n')
    expect(handle.stderr()).toContain('turn 1 cancelled (user)\n')
    expect(handle.stderr()).toContain('goal paused after round 1/3\n')
    expect(handle.stderr()).toContain(`to resume the goal: ${hint(p)} goal --session ${id}\n`)
    expect(handle.stdout()).toBe('Listing.\nGoal paused after 1/3 rounds: "Tidy the workspace"\n')

    const records = await readSession(p, id)
    expect(records.map((record) => record.seq)).toEqual(records.map((_, index) => index))
    expect(records.find((record) => record.type === 'turn/end')?.data.outcome).toEqual({ kind: 'aborted', cause: 'user' })
    expect(records.filter((record) => record.type === 'goal/change').map((record) => record.data.op)).toEqual(['create', 'pause'])

    // Replayable read-only: show --json gives the file's records and changes nothing.
    const before = await snapshot(p)
    const shown = await run([...p.globals, '--json', 'show', id])
    expect(shown.code, shown.stderr).toBe(0)
    expect(jsonLines(shown.stdout)).toEqual([{ type: 'integrity', integrity: { state: 'signed', lines: records.length, unsignedPrefix: 0 } }, ...records.map((record) => ({ type: 'record', session: id, record }))])
    expect(await snapshot(p)).toEqual(before)

    const resumed = await run([...p.globals, 'goal', '--session', id])
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(resumed.stderr).toContain('round 2/3\n')
    expect(resumed.stdout).toBe('Goal done: everything is verified.\nGoal complete (not verified) after 2/3 rounds: "Tidy the workspace"\n')
  })
})
