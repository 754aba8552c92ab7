// The repository's own cordis.yml and offline demo model, as `npm start` runs them (in a temp copy of
// demo/workspace instead of .goalkeeper/demo-workspace, so the repository is not touched).
import { cp, readFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { CLI_TIMEOUT, repoRoot, run, start, useProject } from './cli-helpers.ts'

const project = useProject()
const OBJECTIVE = 'Create NOTES.md in the workspace with a summary of every file in it'

async function demoWorkspace() {
  const p = await project({ script: 'export default []' })
  await cp(path.join(repoRoot, 'demo/workspace'), p.workspace, { recursive: true })
  return ['--cwd', p.workspace, '--config', path.join(repoRoot, 'cordis.yml')] as const
}

describe('the offline demo on the default composition', { timeout: CLI_TIMEOUT }, () => {
  it('completes the demo goal in three rounds with the real workspace tools', async () => {
    const globals = await demoWorkspace()
    const { code, stdout, stderr } = await run([...globals, 'goal', OBJECTIVE, '--max-rounds', '5'])
    expect(code, stderr).toBe(0)
    expect(stderr).toContain('goalkeeper: model scripted (offline; export DEEPSEEK_API_KEY or OPENAI_API_KEY')
    expect(stderr.split('\n').filter((line) => /^round \d/.test(line))).toEqual(['round 1/5', 'round 2/5', 'round 3/5'])
    expect(stdout).toContain(`Goal complete (not verified) after 3/5 rounds: "${OBJECTIVE}"\n`)
    const notes = await readFile(path.join(globals[1], 'NOTES.md'), 'utf8')
    expect(notes.split('\n').filter((line) => line.startsWith('- '))).toHaveLength(4)
  })

  it('GOALKEEPER_DEMO_DELAY_MS slows every answer down, so that Ctrl-C lands in a round and pauses the goal', async () => {
    const globals = await demoWorkspace()
    // Ten minutes: the first model call is still waiting when the signal comes; the abort ends the wait.
    const goal = start([...globals, 'goal', OBJECTIVE, '--max-rounds', '5'], { env: { GOALKEEPER_DEMO_DELAY_MS: '600000' } })
    await goal.waitFor('stderr', /\nround 1\/5\n/)
    goal.child.kill('SIGINT')
    expect(await goal.exit, goal.stderr()).toBe(3)
    expect(goal.stderr()).toContain('\ngoal paused after round 1/5\n')
    expect(goal.stdout()).toContain(`Goal paused after 1/5 rounds: "${OBJECTIVE}"\n`)
  })
})
