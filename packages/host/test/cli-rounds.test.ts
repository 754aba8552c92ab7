import { describe, expect, it } from 'vitest'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { CLI_TIMEOUT, readSession, run, sessionIdOf, useProject } from '@goalkeeper/test-kit'

const project = useProject()

// Round 1 writes one file per step and never stops on its own; round 2 completes the goal.
const longRound = `export default many((request) => {
  if (roundOf(request) === 1) {
    const n = turnResults(request).length + 1
    return { text: '', toolCalls: [{ name: 'write_file', arguments: { path: 'step-' + n + '.txt', content: String(n) } }] }
  }
  return completeGoal(request)
})`

describe('rounds and the step cap', { timeout: CLI_TIMEOUT }, () => {
  it('goal --max-steps N: a round at the cap ends the round, not the goal; the round line names the cap and the option', async () => {
    const p = await project({ script: longRound })
    const { code, stdout, stderr } = await run([...p.globals, 'goal', 'Write the step files', '--max-rounds', '4', '--max-steps', '3'])
    expect(code, stderr).toBe(0)
    expect(stdout).toContain('Goal complete (not verified) after 2/4 rounds')
    expect(stderr).toMatch(/round 1 hit the step cap, so it ends here and the goal goes on: the turn reached the limit of 3 steps \(.*maxSteps.*cordis\.yml.*--max-steps N/)
    expect(stderr).not.toContain('turn-error')
    // Exactly three model calls in round 1: the option reached the agent.
    for (const n of [1, 2, 3]) expect(existsSync(path.join(p.workspace, `step-${n}.txt`))).toBe(true)
    expect(existsSync(path.join(p.workspace, 'step-4.txt'))).toBe(false)
    const records = await readSession(p, sessionIdOf(stderr))
    expect(records.filter((r) => r.type === 'turn/end').map((r) => r.data.outcome.code ?? r.data.outcome.kind)).toEqual(['MAX_STEPS', 'completed'])
  })

  it('run: the step cap stays an error (exit 70) whose message names maxSteps and --max-steps N', async () => {
    const p = await project({ script: `export default many(() => ({ toolCalls: [{ name: 'list_dir', arguments: {} }] }))` })
    const { code, stderr } = await run([...p.globals, 'run', '--max-steps', '2', 'list forever'])
    expect(code, stderr).toBe(70)
    expect(stderr).toMatch(/error in turn 1: MAX_STEPS: the turn reached the limit of 2 steps \(.*maxSteps.*cordis\.yml.*--max-steps N/)
  })

  it('a refusal in a goal round blocks the goal refused and exits 6, as goal --help says', async () => {
    const p = await project({ script: `export default many(() => ({ kind: 'error', code: 'REFUSED', message: 'I will not do that', text: 'The model refused to answer: I will not do that' }))` })
    const { code, stdout, stderr } = await run([...p.globals, 'goal', 'Do the forbidden thing', '--max-rounds', '4'])
    expect(code, stderr).toBe(6)
    expect(stdout).toContain('Goal blocked (refused) after 1/4 rounds')
    expect(stderr).toContain('goal blocked after round 1/4: refused: The model refused to work on the goal (REFUSED: I will not do that).')
    const help = await run(['goal', '--help'])
    expect(help.stdout).toMatch(/\n {2}6 {4}the model refused/)
  })

  it('run, chat and goal all offer --max-steps', async () => {
    for (const command of ['run', 'chat', 'goal']) {
      const help = await run([command, '--help'])
      expect(help.stdout, command).toMatch(/--max-steps <n> +model calls allowed in one turn or goal round/)
    }
  })

  it('rejects a --max-steps that is not a positive whole number', async () => {
    const p = await project({ script: 'export default []' })
    const { code, stderr } = await run([...p.globals, 'run', '--max-steps', '0', 'hi'])
    expect(code).toBe(64)
    expect(stderr).toContain('--max-steps')
  })
})
