import { describe, expect, it } from 'vitest'
import { CLI_TIMEOUT, hint, jsonLines, readSession, run, sessionIdOf, useProject } from '@goalkeeper/test-kit'

const project = useProject()

// Rounds 1 and 2 work (500 tokens each); from round 3 the model completes the goal through the goal tools.
const metered = `export default many((request) => {
  if (roundOf(request) >= 3) return completeGoal(request)
  return { text: 'Working (round ' + roundOf(request) + ').', usage: { inputTokens: 450, cachedInputTokens: 50, outputTokens: 100 } }
})`

// Each case starts node and the CLI (about a second, more on a busy machine).
describe('goalkeeper goal with budgets', { timeout: CLI_TIMEOUT }, () => {
  it('stops at the token budget with exit 5 and the exact command that raises it; that command resumes to completion', async () => {
    const p = await project({ script: metered })
    const first = await run([...p.globals, 'goal', 'Write the report', '--token-budget', '1000', '--time-budget', '30m'])
    expect(first.code, first.stderr).toBe(5)
    const id = sessionIdOf(first.stderr)
    expect(first.stdout).toBe([
      'Working (round 2).',
      'Goal out of budget after 2/256 rounds: "Write the report"',
      'The token budget is used up: 1000 of 1000 tokens.',
      `Spent: tokens 1k/1k, time ${/time (\d+s)\/30m/.exec(first.stdout)?.[1]}/30m`,
      '',
    ].join('\n'))
    const lines = first.stderr.split('\n')
    expect(lines).toContain('goal set: "Write the report" (at most 256 rounds; budget tokens 0/1k, time 0s/30m)')
    expect(lines.some((line) => /^round 2\/256 \(tokens 500\/1k, time \d+s\/30m\)$/.test(line))).toBe(true)
    const raise = `${hint(p)} goal --session ${id} --token-budget 2000`
    expect(first.stderr).toContain(`to raise the budget and resume the goal: ${raise}\n`)

    // Resuming without raising is refused with the same exit code and hint.
    const refused = await run([...p.globals, 'goal', '--session', id])
    expect(refused.code, refused.stderr).toBe(5)
    expect(refused.stderr).toContain('The token budget is used up')
    expect(refused.stderr).toContain(raise)

    const second = await run([...p.globals, 'goal', '--session', id, '--token-budget', '2000'])
    expect(second.code, second.stderr).toBe(0)
    expect(second.stdout).toMatch(/Goal complete \(not verified\) after 3\/256 rounds: "Write the report"\nSpent: tokens 1k\/2k, time \d+s\/30m\n$/)
    const records = await readSession(p, id)
    expect(records.filter((r) => r.type === 'goal/usage').map((r) => [r.data.round, r.data.tokens])).toEqual([[1, 500], [2, 500], [3, 0], [3, 0], [3, 0]])
    expect(records.filter((r) => r.type === 'goal/change').map((r) => r.data.op)).toEqual(['create', 'block', 'edit', 'resume', 'complete'])
  })

  it('--json carries budgets and spend in the goal and result objects; sessions shows the spend', async () => {
    const p = await project({ script: metered })
    const { code, stdout, stderr } = await run([...p.globals, '--json', 'goal', 'Write the report', '--token-budget', '600', '--cost-budget', '2.50'])
    expect(code, stderr).toBe(5)
    const lines = jsonLines(stdout)
    const goals = lines.filter((line) => line.type === 'goal')
    expect(goals[0].goal).toMatchObject({ budgets: { tokens: 600, costUsd: 2.5 } })
    expect(goals.at(-1)).toMatchObject({ op: 'block', goal: { blockedReason: { code: 'budget-limited' }, spent: { tokens: 1000, costUsd: 0, calls: 2 } } })
    expect(lines.at(-1)).toMatchObject({ type: 'result', exitCode: 5, goal: { budgets: { tokens: 600, costUsd: 2.5 }, spent: { tokens: 1000, calls: 2 } } })

    // Wide enough that the GOAL column is not cut (cli-columns tests 80).
    const listed = await run([...p.globals, 'sessions'], { env: { COLUMNS: '400' } })
    expect(listed.code, listed.stderr).toBe(0)
    expect(listed.stdout).toContain('blocked (budget-limited) 2/256, tokens 1k/600, cost $0.0000/$2.50')
  })

  it('refuses bad budget values before anything starts', async () => {
    const p = await project({ script: metered })
    for (const [flag, value] of [['--token-budget', '0'], ['--cost-budget', 'lots'], ['--time-budget', '30']]) {
      const result = await run([...p.globals, 'goal', 'x', flag, value])
      expect(result.code, result.stderr).toBe(64)
      expect(result.stderr).toContain(flag)
    }
  })
})

// Round 1 completes before writing done.txt (the check refuses it); round 2 writes it and completes again.
const checked = `export default many((request) => {
  const results = turnResults(request)
  if (roundOf(request) === 2 && !results.some((r) => r.name === 'write_file')) return { toolCalls: [{ name: 'write_file', arguments: { path: 'done.txt', content: 'ok' } }] }
  const updates = results.filter((r) => r.name === 'update_goal')
  if (updates.length) return { text: updates.at(-1).ok ? 'Goal done: the check passed.' : 'The check failed; next round.' }
  return completeGoal(request)
})`

describe('goalkeeper goal --verify', { timeout: CLI_TIMEOUT }, () => {
  it('refuses a completion whose check fails, then stands once it passes: complete (verified: ... passed)', async () => {
    const p = await project({ script: checked })
    const { code, stdout, stderr } = await run([...p.globals, 'goal', 'Write done.txt', '--verify', 'test -f done.txt', '--max-rounds', '3'])
    expect(code, stderr).toBe(0)
    expect(stdout).toBe('Goal done: the check passed.\nGoal complete (verified: 1 check passed) after 2/3 rounds: "Write done.txt"\n')
    expect(stderr).toMatch(/\n {2}update_goal failed: GOAL_CHECK_FAILED: The goal was not completed: its check `test -f done\.txt` failed\. It exited with code 1\./)
    const records = await readSession(p, sessionIdOf(stderr))
    expect(records.filter((r) => r.type === 'goal/check').map((r) => [r.data.command, r.data.ok, r.data.exitCode])).toEqual([['test -f done.txt', false, 1], ['test -f done.txt', true, 0]])
  })
})

describe('goalkeeper goal --auto-resume', { timeout: CLI_TIMEOUT }, () => {
  it('waits for the announced reset after a usage limit, says when, resumes, and completes', async () => {
    const p = await project({
      config: { 'goal-auto-resume': { marginMs: 0 } },
      script: `let limited = false
export default many((request) => {
  if (!limited) { limited = true; return { kind: 'error', code: 'RATE_LIMIT', message: 'slow down', retryAfterMs: 300 } }
  return completeGoal(request)
})`,
    })
    const { code, stdout, stderr } = await run([...p.globals, '--json', 'goal', 'Finish it', '--auto-resume'])
    expect(code, stderr).toBe(0)
    expect(stderr).toMatch(/\ngoal resumes automatically at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(try 1 of 2; any input cancels it\)\n/)
    expect(stderr).toContain('\ngoal resumed automatically (try 1)\n')
    const notices = jsonLines(stdout).filter((line) => line.type === 'auto-resume')
    expect(notices.map((n) => n.kind)).toEqual(['scheduled', 'resumed'])
    expect(notices[0]).toMatchObject({ waitMs: 300, attempt: 1, maxTries: 2 })
    expect(jsonLines(stdout).at(-1)).toMatchObject({ type: 'result', exitCode: 0, goal: { phase: 'complete' } })
  })

  it('without --auto-resume a usage limit ends the run blocked', async () => {
    const p = await project({ script: `export default [{ kind: 'error', code: 'QUOTA', message: 'insufficient balance', retryAfterMs: 300 }]` })
    const { code, stderr } = await run([...p.globals, 'goal', 'Finish it'])
    expect(code, stderr).toBe(2)
    expect(stderr).not.toContain('resumes automatically')
  })
})
