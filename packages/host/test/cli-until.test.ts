// `goalkeeper goal --until`, on the CLI as a child process with the real plugins and the judge; only the model
// is scripted (the judge is the goal's model in a fresh context, told apart by its system prompt).
import { describe, expect, it } from 'vitest'
import { CLI_TIMEOUT, jsonLines, readSession, run, sessionIdOf, useProject } from '@goalkeeper/test-kit'

const project = useProject()
const JUDGE = `- id: goal-judge\n  name: '@goalkeeper/goal-judge'\n`

// The agent writes done.txt in round 1 and never calls update_goal; the judge answers "met" once the evidence shows it.
const SCRIPT = `export default many((request) => {
  if (request.tools.length === 0) {
    // The evidence carries the files the completing turn's text names, with their content.
    const met = textOf(request.messages[0]).includes('- done.txt\\n<<<\\nok')
    return { text: JSON.stringify({ verdict: met ? 'met' : 'not-met', reasons: [met ? 'done.txt exists.' : 'done.txt is missing.'], missing: [] }) }
  }
  if (turnResults(request).length === 0) return { text: 'Writing.', toolCalls: [{ name: 'write_file', arguments: { path: 'done.txt', content: 'ok' } }] }
  return { text: 'Wrote done.txt.' }
})`

describe('goalkeeper goal --until', { timeout: CLI_TIMEOUT }, () => {
  it('completes the goal when the judge finds the condition met after a round, with no update_goal call', async () => {
    const p = await project({ script: SCRIPT, extraYml: JUDGE })
    const goal = await run([...p.globals, 'goal', '--until', 'done.txt exists', '--max-rounds', '3'])
    expect(goal.code, goal.stderr).toBe(0)
    expect(goal.stdout).toContain('Goal complete (judged met by scripted) after 1/3 rounds: "done.txt exists"')
    const records = await readSession(p, sessionIdOf(goal.stderr))
    expect(records.filter((record) => record.type === 'tool/call').map((record) => record.data.name)).toEqual(['write_file'])
    expect(records.filter((record) => record.type === 'goal/judgement').map((record) => record.data.verdict)).toEqual(['met'])

    // What the goal stood on, in the same words on every front end.
    const id = sessionIdOf(goal.stderr)
    const shown = await run([...p.globals, 'show', id])
    expect(shown.stdout.trimEnd().split('\n')).toContain('goal complete (judged met by scripted)')
    const listed = await run([...p.globals, 'sessions'], { env: { COLUMNS: '400' } })
    expect(listed.stdout).toMatch(new RegExp(`^${id} .* complete 1/3; judged met by scripted `, 'm'))
    const json = jsonLines((await run([...p.globals, '--json', 'sessions'])).stdout)
    expect(json.find((row) => row.id === id)).toMatchObject({ type: 'session', goalStatus: 'complete (judged met by scripted)' })
  })

  it('is refused when the composition loads no judge', async () => {
    const p = await project({ script: SCRIPT })
    const goal = await run([...p.globals, 'goal', '--until', 'done.txt exists'])
    expect(goal.code).not.toBe(0)
    expect(goal.stderr).toContain('--until needs the goal-judge plugin')
  })
})
