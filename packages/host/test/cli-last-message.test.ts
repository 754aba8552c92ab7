// --output-last-message FILE of run, goal and resume, on the CLI as a child process; only the model is scripted.
import { existsSync } from 'node:fs'
import { readFile, readdir } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { CLI_TIMEOUT, jsonLines, run, sessionIdOf, useProject } from '@goalkeeper/test-kit'

const project = useProject()

describe('goalkeeper --output-last-message', { timeout: CLI_TIMEOUT }, () => {
  it('run and resume write the final answer to the file (relative to --cwd) and still print it', async () => {
    const p = await project({ script: 'export default many((request) => ({ text: `Answer to ${textOf(request.messages.at(-1))}.` }))' })
    const first = await run([...p.globals, 'run', '--output-last-message', 'answer.txt', 'hello'])
    expect(first.code, first.stderr).toBe(0)
    expect(first.stdout).toBe('Answer to hello.\n')
    expect(await readFile(path.join(p.workspace, 'answer.txt'), 'utf8')).toBe('Answer to hello.\n')
    const again = await run([...p.globals, 'resume', sessionIdOf(first.stderr), 'more', '--output-last-message', path.join(p.dir, 'second.txt')])
    expect(again.code, again.stderr).toBe(0)
    expect(await readFile(path.join(p.dir, 'second.txt'), 'utf8')).toBe('Answer to more.\n')
  })

  it('goal writes the answer of its last round, also with --json', async () => {
    const p = await project({ script: 'export default many((request) => completeGoal(request))' })
    const result = await run([...p.globals, '--json', 'goal', 'Finish', '--output-last-message', 'final.txt'])
    expect(result.code, result.stderr).toBe(0)
    expect(jsonLines(result.stdout).at(-1)).toMatchObject({ type: 'result', answer: 'Goal done: everything is verified.' })
    expect(await readFile(path.join(p.workspace, 'final.txt'), 'utf8')).toBe('Goal done: everything is verified.\n')
  })

  it('a file that cannot be written is refused before any model call: exit 64, no session', async () => {
    const p = await project({ script: 'export default many(() => { throw new Error("the model must not be called") })' })
    const result = await run([...p.globals, 'run', '--output-last-message', 'missing/dir/answer.txt', 'hello'])
    expect(result.code).toBe(64)
    expect(result.stderr).toMatch(/^goalkeeper: --output-last-message \S+missing\/dir\/answer\.txt: .*ENOENT.* \(hint: name a file in a directory that exists and that you can write\)\n$/)
    expect(existsSync(p.sessions) ? await readdir(p.sessions) : []).toEqual([])
  })
})
