// The repository's own cordis.yml and offline demo model, as `npm start` runs them (in a temp copy of
// demo/workspace instead of .goalkeeper/demo-workspace, so the repository is not touched).
import { cp, readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { CLI_TIMEOUT, repoRoot, run, start, useProject } from '@goalkeeper/test-kit'

const project = useProject()
const OBJECTIVE = 'Create NOTES.md in the workspace with a summary of every file in it'

let stateHome = ''

async function demoWorkspace() {
  const p = await project({ script: 'export default []' })
  await cp(path.join(repoRoot, 'demo/workspace'), p.workspace, { recursive: true })
  // The default composition keeps sessions in the user's state directory: a temp one here.
  stateHome = path.join(p.dir, 'state')
  return ['--cwd', p.workspace, '--config', path.join(repoRoot, 'cordis.yml')] as const
}

describe('the offline demo on the default composition', { timeout: CLI_TIMEOUT }, () => {
  it('completes the demo goal in three rounds with the real workspace tools', async () => {
    const globals = await demoWorkspace()
    const { code, stdout, stderr } = await run([...globals, 'goal', OBJECTIVE, '--max-rounds', '5'], { env: { XDG_STATE_HOME: stateHome } })
    expect(code, stderr).toBe(0)
    expect(stderr).toContain('goalkeeper: model scripted (offline; export DEEPSEEK_API_KEY or OPENAI_API_KEY')
    expect(stderr.split('\n').filter((line) => /^round \d/.test(line))).toEqual(['round 1/5', 'round 2/5', 'round 3/5'])
    expect(stdout).toContain(`Goal complete (not verified) after 3/5 rounds: "${OBJECTIVE}"\n`)
    const notes = await readFile(path.join(globals[1], 'NOTES.md'), 'utf8')
    expect(notes.split('\n').filter((line) => line.startsWith('- '))).toHaveLength(4)
    // The session went to the state directory, not into the workspace.
    const [dir] = await readdir(path.join(stateHome, 'goalkeeper/sessions'))
    expect(dir).toMatch(/^workspace-[0-9a-f]{16}$/)
    expect((await readdir(path.join(globals[1]))).includes('.goalkeeper')).toBe(false)
  })

  it('GOALKEEPER_DEMO_DELAY_MS slows every answer down, so that Ctrl-C lands in a round and pauses the goal', async () => {
    const globals = await demoWorkspace()
    // Ten minutes: the first model call is still waiting when the signal comes; the abort ends the wait.
    const goal = start([...globals, 'goal', OBJECTIVE, '--max-rounds', '5'], { env: { GOALKEEPER_DEMO_DELAY_MS: '600000', XDG_STATE_HOME: stateHome } })
    await goal.waitFor('stderr', /\nround 1\/5\n/)
    goal.child.kill('SIGINT')
    expect(await goal.exited(), goal.stderr()).toBe(3)
    expect(goal.stderr()).toContain('\ngoal paused after round 1/5\n')
    expect(goal.stdout()).toContain(`Goal paused after 1/5 rounds: "${OBJECTIVE}"\n`)
  })

  it('another goal or a prompt is not run: the demo model says it only knows the demo goal and how to use a real model', async () => {
    const globals = await demoWorkspace()
    const [goal, prompt] = await Promise.all([
      run([...globals, 'goal', 'Make the tests pass', '--max-rounds', '10']),
      run([...globals, 'run', 'What does greet.js do?']),
    ])
    expect(goal.code, goal.stderr).toBe(2)
    expect(goal.stdout + goal.stderr).toContain(`the offline demo model only knows the demo goal ("${OBJECTIVE}"); export DEEPSEEK_API_KEY or OPENAI_API_KEY to use a real model`)
    expect(goal.stderr).not.toMatch(/^round 1/m)
    await expect(readFile(path.join(globals[1], 'NOTES.md'), 'utf8')).rejects.toThrow(/ENOENT/)
    expect(prompt.code, prompt.stderr).toBe(0)
    expect(prompt.stdout).toContain(`it only knows the demo goal ("${OBJECTIVE}") and does not answer prompts. You said: "What does greet.js do?". To work on it, export DEEPSEEK_API_KEY or OPENAI_API_KEY to use a real model`)
  })
})
