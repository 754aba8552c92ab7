// `goalkeeper show` of a goal run, on the CLI as a child process with the real plugins (the permissions entry
// as the default cordis.yml writes it, so commands and checks run in the sandbox); only the model is scripted.
import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { CLI_TIMEOUT, jsonLines, readSession, run, sessionIdOf, useProject } from '@goalkeeper/test-kit'

const project = useProject()
const PERMISSIONS = `- id: permissions\n  name: '@goalkeeper/permissions'\n  config:\n    mode: \${GOALKEEPER_PERMISSIONS:-workspace-write}\n`

// get_goal, update_goal complete, the answer: every call reports its usage.
const CHECKED = `export default many((request) => ({ ...completeGoal(request), usage: { inputTokens: 450, cachedInputTokens: 50, outputTokens: 100 } }))`

describe('goalkeeper show', { timeout: CLI_TIMEOUT }, () => {
  it('renders usage per turn and in total, the check with its real exit code and the goal\'s spend; raw records only with --json', async () => {
    const p = await project({ script: CHECKED, extraYml: PERMISSIONS })
    const goal = await run([...p.globals, '--json', 'goal', 'Say done', '--verify', 'echo checked', '--token-budget', '100000', '--max-rounds', '2'])
    expect(goal.code, goal.stderr).toBe(0)
    const id = sessionIdOf(goal.stderr)
    // The check ran sandboxed: its output ends with the sandbox's note, and its exit code is still read.
    const records = await readSession(p, id)
    const checks = records.filter((record) => record.type === 'goal/check').map((record) => record.data)
    expect(checks).toEqual([expect.objectContaining({ command: 'echo checked', ok: true, exitCode: 0, output: expect.stringMatching(/\[Exit code 0 after [\d.]+ s; in the sandbox: /) })])
    // What the model reads of the goal (update_goal's answer, as get_goal's), and what --json says of the goal, carry the same code.
    const readBack = records.find((record) => record.type === 'tool/result' && record.data.callId === 'call_2')!.data.content
    expect(JSON.parse(readBack).goal.check.last).toEqual({ command: 'echo checked', ok: true, exitCode: 0 })
    expect(jsonLines(goal.stdout).at(-1)).toMatchObject({ type: 'result', goal: { verification: { last: { exitCode: 0 } } } })

    const shown = await run([...p.globals, 'show', id])
    expect(shown.code, shown.stderr).toBe(0)
    expect(shown.stdout).not.toContain('[goal/usage]')
    expect(shown.stdout).not.toContain('[goal/check]')
    expect(shown.stdout).toContain('\n  check `echo checked` passed (exit code 0)\n')
    // Three model calls of 450 in (50 cached) and 100 out: 500 tokens each by the one token rule; scripted costs nothing.
    expect(shown.stdout).toContain('\n  turn 1 completed (3 model calls, 1,500 tokens, $0.00)\n')
    expect(shown.stdout).toMatch(/\ngoal spent: tokens 1,500 of 100,000, cost \$0\.00, time \d+s, rounds 1 of 2\n/)
    expect(shown.stdout).toMatch(/\ntotal: 3 model calls, 1,500 tokens, \$0\.00 \(tokens are input - cached input \+ output, as goal budgets count them; cost of goal rounds\)\n$/)

    const json = jsonLines((await run([...p.globals, '--json', 'show', id])).stdout)
    expect(json.filter((line) => line.type === 'record' && line.record.type === 'goal/check').map((line) => line.record.data.exitCode)).toEqual([0])
  })
  it('show --json prints the records as run --json streamed them: the same lines after its integrity line', async () => {
    const p = await project({ script: 'export default many(() => ({ text: "Hello back.", usage: { inputTokens: 10, outputTokens: 2 } }))' })
    const ran = await run([...p.globals, '--json', 'run', 'hello'])
    expect(ran.code, ran.stderr).toBe(0)
    const streamed = jsonLines(ran.stdout).filter((line) => line.type === 'record')
    expect(streamed.length).toBeGreaterThan(3)
    const shown = jsonLines((await run([...p.globals, '--json', 'show', streamed[0].session])).stdout)
    expect(shown[0]).toMatchObject({ type: 'integrity', integrity: { state: 'signed' } })
    expect(shown.slice(1)).toEqual(streamed)
  })

  it('show prints a log larger than an open may hold as it streams it, and marks a line changed in its middle where it starts', async () => {
    // The second answer alone is larger than maxOpenBytes: an open that holds records refuses the log, show streams it.
    const script = 'export default many((request) => ({ text: request.messages.length > 2 ? "Long " + "b".repeat(70000) : "Short answer." }))'
    const p = await project({ script, config: { session: { maxOpenBytes: 65536, logVersion: 1 } } })
    const first = await run([...p.globals, 'run', 'first question'])
    expect(first.code, first.stderr).toBe(0)
    const id = sessionIdOf(first.stderr)
    const second = await run([...p.globals, 'run', '--session', id, 'second question'])
    expect(second.code, second.stderr).toBe(0)
    const file = path.join(p.sessions, `${id}.jsonl`)
    expect(Buffer.byteLength(await readFile(file, 'utf8'))).toBeGreaterThan(65536)
    const tail = await run([...p.globals, 'show', id, '--tail'])
    expect(tail.code, tail.stderr).not.toBe(0)
    expect(tail.stderr).toContain('more than the 0.1 MiB a session may have to be opened')
    const shown = await run([...p.globals, 'show', id])
    expect(shown.code, shown.stderr).toBe(0)
    expect(shown.stdout).toContain('first question')
    expect(shown.stdout).toContain(`assistant: Long ${'b'.repeat(70000)}\n`)
    expect(shown.stdout).not.toContain('!!')
    const json = jsonLines((await run([...p.globals, '--json', 'show', id])).stdout)
    expect(json[0]).toMatchObject({ type: 'integrity', integrity: { state: 'signed', lines: json.length - 1 } })
    expect(json.slice(1).map((line) => line.record.seq)).toEqual([...Array(json.length - 1).keys()])

    // The first prompt edited in place: trust ends at its line, and everything after it is marked.
    const lines = (await readFile(file, 'utf8')).slice(0, -1).split('\n')
    const edited = lines.findIndex((line) => line.includes('"type":"user/message"') && line.includes('first question'))
    lines[edited] = lines[edited].replace('first question', 'forged question')
    await writeFile(file, lines.map((line) => `${line}\n`).join(''))
    const tampered = await run([...p.globals, 'show', id])
    expect(tampered.code, tampered.stderr).toBe(0)
    const out = tampered.stdout.split('\n')
    const warning = out.findIndex((line) => line.startsWith('!! TAMPERED: '))
    expect(out[warning]).toBe(`!! TAMPERED: ${file}:${edited + 1}: line does not match its signature: it was edited, moved, inserted or written by someone without the key`)
    expect(out.slice(0, warning).some((line) => line.includes('unverified'))).toBe(false)
    expect(out[warning + 2]).toBe('unverified |   user: forged question')
    expect(tampered.stdout).toContain('unverified |   user: second question')
    const marked = jsonLines((await run([...p.globals, '--json', 'show', id])).stdout)
    expect(marked[0]).toMatchObject({ type: 'integrity', integrity: { state: 'tampered', line: edited + 1 } })
    expect(marked.slice(1).filter((line) => line.unverified).map((line) => line.record.seq)).toEqual(marked.slice(1 + edited).map((line) => line.record.seq))
  })

  // On both log versions: the window before the checkpoint starts at a line (1) or at a batch (2).
  it.each([2, 1])('show --tail prints only the last turn (or the last N), read from the last checkpoint; plain show prints them all (log version %i)', async (logVersion) => {
    const p = await project({ script: 'export default many((request) => ({ text: "Answer " + request.messages.length + "." }))', config: { session: { checkpointEvery: 4, logVersion } } })
    const first = await run([...p.globals, 'run', 'first question'])
    expect(first.code, first.stderr).toBe(0)
    const id = sessionIdOf(first.stderr)
    expect((await readSession(p, id))[0]).toMatchObject({ type: 'session/header', data: { version: logVersion } })
    for (const prompt of ['second question', 'third question', 'fourth question']) {
      const next = await run([...p.globals, 'run', '--session', id, prompt])
      expect(next.code, next.stderr).toBe(0)
    }
    expect((await readSession(p, id)).filter((record) => record.type === 'session/checkpoint').length).toBeGreaterThan(1)
    const tail = await run([...p.globals, 'show', id, '--tail'])
    expect(tail.code, tail.stderr).toBe(0)
    expect(tail.stdout).toContain('fourth question')
    expect(tail.stdout).toContain('Answer 7.')
    expect(tail.stdout).not.toContain('third question')
    const json = jsonLines((await run([...p.globals, '--json', 'show', id, '--tail', '2'])).stdout)
    expect(json[0]).toMatchObject({ type: 'integrity', integrity: { state: 'signed' } })
    expect(json[1]).toMatchObject({ type: 'record', record: { type: 'turn/start', data: { turn: 3 } } })
    expect(json.filter((line) => line.record?.type === 'turn/start').map((line) => line.record.data.turn)).toEqual([3, 4])
    const whole = await run([...p.globals, 'show', id])
    for (const prompt of ['first', 'second', 'third', 'fourth']) expect(whole.stdout).toContain(`${prompt} question`)
    const bad = await run([...p.globals, 'show', id, '--tail', 'none'])
    expect(bad.code).toBe(64)
    expect(bad.stderr).toContain('--tail takes a number of turns, a whole number from 1; got "none"')
  })
})
