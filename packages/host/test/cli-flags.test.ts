// The run flags through the real CLI: --model, --last, `-` for stdin, usage in progress and --json, --show-reasoning.
import { describe, expect, it } from 'vitest'
import { CLI_TIMEOUT, jsonLines, run, sessionIdOf, start, useProject } from '@goalkeeper/test-kit'

const project = useProject()

/** Echoes the last user message, names the model id it was asked for, reports usage and reasoning. */
const echo = `export default many((request) => {
  const users = request.messages.filter((message) => message.role === 'user').map(textOf)
  return {
    text: 'model ' + (request.model ?? 'default') + ' heard: ' + users.join(' | '),
    reasoning: 'thinking it over',
    usage: { inputTokens: 120, cachedInputTokens: 100, outputTokens: 9, reasoningTokens: 4 },
  }
})`

describe('run flags', { timeout: CLI_TIMEOUT }, () => {
  it('--model picks the provider and model id, and the header and check say so; an unknown one is refused', async () => {
    const p = await project({ script: echo })
    const [picked, check, unknown] = await Promise.all([
      run([...p.globals, '--model', 'scripted/tiny-1', 'run', 'hello']),
      run([...p.globals, '--model', 'scripted/tiny-1', 'check']),
      run([...p.globals, '--model', 'nope', 'run', 'hello']),
    ])
    expect(picked.code, picked.stderr).toBe(0)
    expect(picked.stdout).toBe('model tiny-1 heard: hello\n')
    expect(picked.stderr).toContain('goalkeeper: model scripted/tiny-1 (offline); chosen with --model\n')
    expect(check.stdout).toContain('model scripted/tiny-1 (offline); chosen with --model\n')
    expect(unknown.code).toBe(64)
    expect(unknown.stderr).toContain('goalkeeper: --model nope: no such provider is loaded (hint: registered providers: scripted)')
  })

  it('`run -` reads the prompt from stdin, and --last continues the most recent session of the workspace', async () => {
    const p = await project({ script: echo })
    const piped = start([...p.globals, 'run', '-'], { stdin: 'pipe' })
    piped.child.stdin!.end('a prompt\nover two lines\n')
    expect(await piped.exited(), piped.stderr()).toBe(0)
    expect(piped.stdout()).toBe('model default heard: a prompt\nover two lines\n')
    const id = sessionIdOf(piped.stderr())
    const again = await run([...p.globals, 'run', '--last', 'and more'])
    expect(again.code, again.stderr).toBe(0)
    expect(again.stderr).toContain(`goalkeeper: session ${id} (resumed)`)
    expect(again.stdout).toBe('model default heard: a prompt\nover two lines | and more\n')
    const cont = await run([...p.globals, 'run', '--continue', 'third'])
    expect(sessionIdOf(cont.stderr)).toBe(id)
  })

  it('usage per turn and in total on stderr, in the --json result, and reasoning on stderr only when asked', async () => {
    const p = await project({ script: echo })
    const [plain, reasoning, json] = await Promise.all([
      run([...p.globals, 'run', 'hi']),
      run([...p.globals, '--show-reasoning', 'run', 'hi']),
      run([...p.globals, '--json', 'run', 'hi']),
    ])
    // The scripted model is offline: its calls cost nothing, and the cost says so.
    expect(plain.stderr).toContain('\n  tokens: 120 in (100 cached), 9 out (4 reasoning); cost $0.00\n')
    expect(plain.stderr).toContain('goalkeeper: tokens used: 120 in (100 cached), 9 out (4 reasoning) in 1 model call; cost $0.00\n')
    expect(plain.stderr).not.toContain('thinking it over')
    expect(plain.stdout).not.toContain('thinking it over')
    expect(reasoning.stderr).toContain('\n  reasoning: thinking it over\n')
    expect(reasoning.stdout).toBe('model default heard: hi\n')
    const lines = jsonLines(json.stdout)
    const usage = { inputTokens: 120, cachedInputTokens: 100, outputTokens: 9, reasoningTokens: 4, calls: 1 }
    expect(lines.find((line) => line.type === 'usage')).toMatchObject({ turn: 1, usage })
    expect(lines.at(-1)).toMatchObject({ type: 'result', usage })
  })

  it('a refusal is the answer, the outcome says REFUSED and the exit code is 6', async () => {
    const p = await project({ script: `export default many(() => ({ kind: 'error', code: 'REFUSED', message: 'scripted: the model refused: not allowed', text: 'The model refused to answer: not allowed' }))` })
    const result = await run([...p.globals, '--json', 'run', 'do it'])
    expect(result.code, result.stderr).toBe(6)
    expect(jsonLines(result.stdout).at(-1)).toMatchObject({
      type: 'result', exitCode: 6, answer: 'The model refused to answer: not allowed',
      outcome: { kind: 'error', code: 'REFUSED', message: 'scripted: the model refused: not allowed' },
    })
  })
})
