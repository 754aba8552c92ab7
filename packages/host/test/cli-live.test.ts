// What a person sees while the model works: the live status line on a terminal (replaced, never scrolled),
// reasoning as it arrives, a result line and a diff per tool call, tokens and cost after each turn and run;
// and the same run piped, where the output stays line-based and plain.
import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { delta, frame, startSse, usageFrame, useOpenAIServers } from '@goalkeeper/test-kit'
import { CLI_TIMEOUT, localModelProject, run, start, useProject } from '@goalkeeper/test-kit'
import { startOnTerminal } from './on-terminal.ts'

const project = useProject()
const serve = useOpenAIServers()

/** A new file, an edit of it and a command, then an answer. */
const EDITS = `export default [
  { toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'line one\\nline two\\n' } }] },
  { toolCalls: [{ name: 'edit_file', arguments: { path: 'a.txt', old_string: 'line one', new_string: 'line 1' } }] },
  { toolCalls: [{ name: 'run_command', arguments: { command: 'cat a.txt' } }] },
  { text: 'Edited.', usage: { inputTokens: 300, outputTokens: 20 } },
]`

const STATUS = /^working \d+s · /

describe('live output on a terminal', { timeout: CLI_TIMEOUT }, () => {
  it('one status line while the model works, replaced when the answer comes; reasoning shown as it arrives, once', async () => {
    let release!: () => void
    const released = new Promise<void>((resolve) => (release = resolve))
    // The reasoning arrives, then the model keeps the request open until the test has seen the screen.
    const server = await serve([async (res) => {
      startSse(res)
      res.write(delta({ role: 'assistant', reasoning_content: 'weighing the options\n' }))
      await released
      res.write(delta({ content: 'All done.' }))
      res.write(delta({}, 'stop'))
      res.write(usageFrame({ prompt_tokens: 1200, completion_tokens: 34 }))
      res.end(frame('[DONE]'))
    }])
    const p = await project(localModelProject(server.url))
    const term = startOnTerminal([...p.globals, '--show-reasoning', 'run', 'decide'])
    // The reasoning is on the screen before the answer exists, and the status line sits below it.
    await term.until(/^ {2}reasoning: weighing the options\nworking \d+s · 0 tokens$/m)
    expect(term.screen().join('\n')).not.toContain('All done.')
    release()
    expect(await term.exit, term.screen().join('\n')).toBe(0)
    const screen = term.screen()
    expect(screen.filter((line) => STATUS.test(line)), 'the status line is erased, not scrolled').toEqual([])
    expect(screen.filter((line) => line.includes('weighing the options'))).toEqual(['  reasoning: weighing the options'])
    expect(screen).toContain('All done.')
    // A provider without a known price: the cost is said to be unknown, never guessed.
    expect(screen).toContain('  tokens: 1200 in, 34 out; cost unknown (no price for the model)')
    expect(screen).toContain('goalkeeper: tokens used: 1200 in, 34 out in 1 model call; cost unknown (no price for the model)')
  })

  it('a goal shows its round and spend against the budget in the status line', async () => {
    const p = await project({ script: `export default many(async (request) => { await released('go'); return completeGoal(request) })` })
    const term = startOnTerminal([...p.globals, 'goal', '--max-rounds', '3', '--token-budget', '10000', 'make it so'])
    await term.until(/^working \d+s · 0 tokens · round 1\/3 · tokens 0\/10k$/m)
    await writeFile(path.join(p.dir, 'go'), '')
    expect(await term.exit, term.screen().join('\n')).toBe(0)
    expect(term.screen().filter((line) => STATUS.test(line))).toEqual([])
  })

  it('in chat the status leads the prompt while the agent works, and the plain prompt comes back after the turn', async () => {
    const p = await project({ script: `export default many(async () => { await released('go'); return { text: 'Heard.', usage: { inputTokens: 50, outputTokens: 5 } } })` })
    const term = startOnTerminal([...p.globals, 'chat'])
    await term.until(/^>$/m)
    term.keys('hello\r')
    await term.until(/^working \d+s · 0 tokens >$/m)
    await writeFile(path.join(p.dir, 'go'), '')
    await term.until(/^Heard\.\n {2}tokens: 50 in, 5 out; cost \$0\.00\n>$/m)
    term.keys('\x04')
    expect(await term.exit, term.screen().join('\n')).toBe(0)
    expect(term.screen().filter((line) => STATUS.test(line))).toEqual([])
  })

  it('each tool call gets a result line; an edit its unified diff, coloured', async () => {
    const p = await project({ script: EDITS })
    const term = startOnTerminal([...p.globals, 'run', 'edit it'], { env: { NO_COLOR: undefined } })
    expect(await term.exit, term.screen().join('\n')).toBe(0)
    const screen = term.screen()
    const at = (line: string) => screen.indexOf(line)
    expect(at('  ok write_file a.txt: +2 -0 lines'), screen.join('\n')).toBeGreaterThan(0)
    expect(screen.slice(at('  ok write_file a.txt: +2 -0 lines') + 1, at('  ok write_file a.txt: +2 -0 lines') + 6))
      .toEqual(['    --- /dev/null', '    +++ b/a.txt', '    @@ -0,0 +1,2 @@', '    +line one', '    +line two'])
    expect(screen.slice(at('  ok edit_file a.txt: +1 -1 lines') + 1, at('  ok edit_file a.txt: +1 -1 lines') + 6))
      .toEqual(['    --- a/a.txt', '    +++ b/a.txt', '    @@ -1 +1 @@', '    -line one', '    +line 1'])
    expect(screen).toContain('  ok run_command: exit code 0')
    expect(term.raw()).toContain('\x1b[31m-line one\x1b[0m')
    expect(term.raw()).toContain('\x1b[32m+line 1\x1b[0m')
    expect(screen).toContain('Edited.')
    // The scripted model is offline: its calls cost nothing.
    expect(screen).toContain('goalkeeper: tokens used: 300 in, 20 out in 1 model call; cost $0.00')
  })
})

describe('live output piped', { timeout: CLI_TIMEOUT }, () => {
  it('the same run: line-based, no status line, no colours; --json carries none of it', async () => {
    const p = await project({ script: EDITS })
    // One after the other: the second run would find a.txt there already.
    const plain = await run([...p.globals, 'run', 'edit it'])
    const json = await run([...p.globals, '--json', 'run', 'again'])
    expect(plain.code, plain.stderr).toBe(0)
    expect(plain.stdout).toBe('Edited.\n')
    expect(plain.stderr).toContain([
      '  ok write_file a.txt: +2 -0 lines', '    --- /dev/null', '    +++ b/a.txt', '    @@ -0,0 +1,2 @@', '    +line one', '    +line two', '',
    ].join('\n'))
    expect(plain.stderr).toContain('  ok run_command: exit code 0\n')
    expect(plain.stderr).not.toMatch(/\x1b|\r|working \d/)
    expect(json.stdout).not.toContain(' ok ')
  })

  it('chat prints tokens and cost after each turn', async () => {
    const p = await project({ script: `export default many(() => ({ text: 'Heard.', usage: { inputTokens: 50, outputTokens: 5 } }))` })
    const chat = start([...p.globals, 'chat'], { stdin: 'pipe' })
    chat.child.stdin!.end('first\nsecond\n')
    expect(await chat.exited(), chat.stderr()).toBe(0)
    expect(chat.stderr().split('\n').filter((line) => line.startsWith('  tokens:'))).toEqual(['  tokens: 50 in, 5 out; cost $0.00', '  tokens: 50 in, 5 out; cost $0.00'])
  })
})
