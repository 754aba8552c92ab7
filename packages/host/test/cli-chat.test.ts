import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { CLI_TIMEOUT, fileMatches, hint, jsonLines, readSession, run, sessionIdOf, start, useProject } from '@goalkeeper/test-kit'

const project = useProject()

describe('goalkeeper chat', { timeout: CLI_TIMEOUT }, () => {
  it('driven through stdin: /goal sets a goal, a human message preempts the round, /goal pause cancels one, resume, clear', async () => {
    // Each goal round waits until the test creates release-N, then lists the workspace and ends its turn.
    const p = await project({
      // The human turn after a preempted round follows a tool result, so it is told apart by its last user message.
      script: `export default many(async (request) => {
        const last = textOf(request.messages.filter((message) => message.role === 'user').at(-1))
        if (!last.startsWith('<goal_round>')) return { text: 'Human turn: ' + last }
        const round = roundOf(request)
        if (turnResults(request).length) return { text: 'Round ' + round + ' done.' }
        say('round ' + round + ' is in its model call')
        await released('release-' + round)
        return { text: 'Round ' + round + ' working.', toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] }
      })`,
    })
    const release = (round: number) => writeFile(path.join(p.dir, `release-${round}`), '')
    const chat = start([...p.globals, 'chat'], { stdin: 'pipe' })

    chat.type('/goal --max-rounds 5 Write the summary')
    await chat.waitFor('stdout', /^Goal set\.\nObjective: Write the summary\nPhase: active \(armed\)\nRounds: 0\/5\n/)
    await chat.waitFor('stderr', /\nround 1\/5\n/)
    // The round's records are flushed before its model call: wait for the call itself.
    await chat.waitFor('stderr', /script: round 1 is in its model call\n/)

    // Typed while round 1 runs: the round ends after the step under way, the human turn goes next, then round 2.
    chat.type('please note this')
    await fileMatches(path.join(p.sessions, `${sessionIdOf(chat.stderr())}.jsonl`), /"please note this"/)
    await release(1)
    await chat.waitFor('stderr', /turn 1 ended early: human message \S+ arrived during goal round 1\n/)
    await chat.waitFor('stdout', /Human turn: please note this\n/)
    await chat.waitFor('stderr', /\nround 2\/5\n/)
    await chat.waitFor('stderr', /script: round 2 is in its model call\n/)

    // Round 2 is waiting on its model call: the pause cancels it there, like Ctrl-C.
    chat.type('/goal pause')
    await chat.waitFor('stdout', /Goal paused\.\n(.*\n)*Phase: paused\n/)
    await chat.waitFor('stderr', /turn 3 cancelled \(user\)\n/)
    await release(2)

    chat.type('/goal resume')
    await chat.waitFor('stdout', /Goal resumed\.\n/)
    await chat.waitFor('stderr', /\nround 3\/5\n/)
    chat.type('/goal clear')
    await chat.waitFor('stdout', /Goal cleared\.\n/)
    await release(3)
    await chat.waitFor('stdout', /Round 3 done\.\n/)
    chat.child.stdin!.end()

    // At the end of input chat waits for the agent to be idle; without a goal the last turn's outcome decides.
    expect(await chat.exited(), chat.stderr()).toBe(0)
    const records = await readSession(p, sessionIdOf(chat.stderr()))
    const admitted = records.filter((record) => record.type === 'user/message').map((record) => record.data.source.kind === 'goal' ? `round ${record.data.source.round}` : record.data.content[0].text)
    expect(admitted).toEqual(['round 1', 'please note this', 'round 2', 'round 3'])
    expect(records.filter((record) => record.type === 'goal/change').map((record) => record.data.op)).toEqual(['create', 'pause', 'resume', 'clear'])
    expect(records.filter((record) => record.type === 'turn/end').map((record) => record.data.outcome.kind)).toEqual(['preempted', 'completed', 'aborted', 'completed'])
    // Round 1 made one model call, round 2 one (aborted), round 3 two.
    expect(records.filter((record) => record.type === 'step/start').map((record) => record.data.turn)).toEqual([1, 2, 3, 4, 4])
    expect(chat.stdout().split('\n').filter((line) => /done\.|Human turn|^Goal \w+\.$/.test(line))).toEqual([
      'Goal set.', 'Human turn: please note this', 'Goal paused.', 'Goal resumed.', 'Goal cleared.', 'Round 3 done.',
    ])
  })

  it('piped input ends: chat waits for the goal to settle and exits with its code', async () => {
    const p = await project({ script: 'export default many((request) => (roundOf(request) ? completeGoal(request) : { text: "Hello back." }))' })
    const chat = start([...p.globals, 'chat'], { stdin: 'pipe' })
    chat.type('hello')
    chat.type('/goal Say hello properly')
    chat.type('/goal')
    chat.child.stdin!.end()
    expect(await chat.exited(), chat.stderr()).toBe(0)
    expect(chat.stdout()).toMatch(/^Hello back\.\nGoal set\.\n(.*\n){3}Objective: .*\n(.*\n){2}Goal done: everything is verified\.\n$/)
    expect(chat.stderr()).toContain('goal complete after round 1/256\n')
  })

  it('--json with piped input: every stdout line is typed: records, the /goal commands, goal changes, usage, the result', async () => {
    const p = await project({ script: 'export default many((request) => (roundOf(request) ? completeGoal(request) : { text: "Hello back.", usage: { inputTokens: 5, outputTokens: 2 } }))' })
    const chat = start([...p.globals, '--json', 'chat'], { stdin: 'pipe' })
    chat.type('hello')
    chat.type('/goal Say hello properly')
    chat.type('/goal')
    chat.child.stdin!.end()
    expect(await chat.exited(), chat.stderr()).toBe(0)
    const lines = jsonLines(chat.stdout())
    expect(new Set(lines.map((line) => line.type))).toEqual(new Set(['record', 'usage', 'command', 'goal', 'activation', 'result']))
    expect(lines.filter((line) => line.type === 'command').map((line) => [line.command, line.ok])).toEqual([['create', true], ['show', true]])
    expect(lines.at(-1)).toMatchObject({ type: 'result', exitCode: 0, goal: { phase: 'complete' } })
  })

  it('/compact compacts the history now: a progress line, a summary in place of the earlier messages, and a note when nothing is left', async () => {
    const p = await project({
      script: `export default many((request) => request.system.startsWith('You write the working summary')
        ? { text: 'The person sent a long note and a greeting.' }
        : { text: 'Answer to ' + textOf(request.messages.filter((message) => message.role === 'user').at(-1)).slice(0, 12) + '.' })`,
    })
    const chat = start([...p.globals, 'chat'], { stdin: 'pipe' })
    chat.type(`A long note: ${'words of the note '.repeat(200)}`)
    await chat.waitFor('stdout', /Answer to A long note:\.\n/)
    chat.type('hello there')
    await chat.waitFor('stdout', /Answer to hello there\.\n/)
    chat.type('/compact')
    await chat.waitFor('stderr', /\n {2}compacted: 2 messages, ~\d+(\.\d)?k -> \d+(\.\d)?k? tokens of \d+(\.\d)?k \(summary\) on request\n/)
    chat.type('/compact')
    await chat.waitFor('stderr', /\ngoalkeeper: nothing compacted: the history would get no shorter\n/)
    chat.type('and now?')
    chat.child.stdin!.end()
    expect(await chat.exited(), chat.stderr()).toBe(0)
    const records = await readSession(p, sessionIdOf(chat.stderr()))
    expect(records.filter((record) => record.type === 'context/compacted').map((record) => [record.data.reason, record.data.method, record.data.replaced]))
      .toEqual([['request', 'summary', 2]])
    expect(chat.stdout()).toContain('Answer to and now?.\n')
  })

  it('Ctrl-C (SIGINT) cancels a running round, which pauses the goal; with nothing running it shuts down', async () => {
    const p = await project({
      script: `export default many((request) => {
        if (!roundOf(request)) return { text: 'Human turn.' }
        say('hanging in round ' + roundOf(request))
        return { kind: 'hang' }
      })`,
    })
    const chat = start([...p.globals, 'chat'], { stdin: 'pipe' })
    chat.type('/goal --max-rounds 5 Keep going')
    await chat.waitFor('stderr', /script: hanging in round 1\n/)
    chat.child.kill('SIGINT')
    await chat.waitFor('stderr', /goalkeeper: Ctrl-C: cancelled the running turn\n/)
    await chat.waitFor('stderr', /goal paused after round 1\/5\n/)
    chat.type('/goal')
    await chat.waitFor('stdout', /Phase: paused\n/)
    chat.child.kill('SIGINT')
    expect(await chat.exited(), chat.stderr()).toBe(0)
    expect(chat.stderr()).toContain('goalkeeper: SIGINT: shutting down')
    const records = await readSession(p, sessionIdOf(chat.stderr()))
    expect(records.filter((record) => record.type === 'turn/end').map((record) => record.data.outcome)).toEqual([{ kind: 'aborted', cause: 'user' }])
    expect(records.filter((record) => record.type === 'goal/change').map((record) => record.data.op)).toEqual(['create', 'pause'])
  })

  it('after a crash, resume repairs the session and runs the human message that was still queued', async () => {
    const p = await project({
      script: `export default many((request) => {
        if (!roundOf(request)) return { text: 'Answer: ' + opening(request).text }
        say('hanging in round ' + roundOf(request))
        return { kind: 'hang' }
      })`,
    })
    const chat = start([...p.globals, 'chat'], { stdin: 'pipe' })
    chat.type('/goal --max-rounds 2 Work on it')
    await chat.waitFor('stderr', /script: hanging in round 1\n/)
    chat.type('are you there?')
    const id = sessionIdOf(chat.stderr())
    await fileMatches(path.join(p.sessions, `${id}.jsonl`), /"are you there\?"/)
    chat.child.kill('SIGKILL')
    expect(await chat.exited()).toBe(null)

    const resumed = await run([...p.globals, 'resume', id])
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(resumed.stdout).toBe('Answer: are you there?\n')
    expect(resumed.stderr).toMatch(/goalkeeper: the session was repaired after a crash: .*repair records appended\n/)
    expect(resumed.stderr).toContain('goalkeeper: 1 unanswered input restored from the session\n')
    expect(resumed.stderr).toContain('goalkeeper: the session has a goal, loaded disarmed (active, 1/2 rounds): "Work on it"\n')
    expect(resumed.stderr).toContain(`goalkeeper: to resume the goal: ${hint(p)} goal --session ${id}\n`)
    const outcomes = (await readSession(p, id)).filter((record) => record.type === 'turn/end').map((record) => record.data.outcome.kind)
    expect(outcomes).toEqual(['interrupted', 'completed'])
  })
})
