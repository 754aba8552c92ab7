// chat on a real terminal: a pseudo-terminal made by util-linux `script`, so that stdin and stdout are
// TTYs (prompt, raw keys, streamed text), checked as the screen a person would see.
import { describe, expect, it } from 'vitest'
import { delta, startSse, textReply, useOpenAIServers } from '@goalkeeper/test-kit'
import { CLI_TIMEOUT, localModelProject, useProject } from '@goalkeeper/test-kit'
import { startOnTerminal } from './on-terminal.ts'

const project = useProject()
const serve = useOpenAIServers()

describe('goalkeeper chat on a terminal', { timeout: CLI_TIMEOUT }, () => {
  it('what is typed while an answer streams stays out of it and returns with the prompt; leaving clears the prompt line', async () => {
    // The answer streams its text, then waits (a model still thinking) until Ctrl-C aborts it.
    const p = await project({ script: "export default [{ kind: 'hang', text: 'First part of the answer' }]" })
    const term = startOnTerminal([...p.globals, 'chat'])
    // Screen lines are right-trimmed: an empty prompt is `>`.
    await term.until(/^>$/m)
    term.keys('hello\r')
    await term.until(/^First part of the answer/m)
    // Typed mid-stream, then Ctrl-C: the same input stream, so the keys are read before the interrupt.
    term.keys('abc')
    term.keys('\x03')
    await term.until(/goalkeeper: Ctrl-C: cancelled the running turn\n(.*\n)*> abc$/)
    // Ctrl-C drops the typed text, Ctrl-D at the empty prompt leaves.
    term.keys('\x03')
    await term.until(/\n>$/)
    term.keys('\x04')
    // The last turn was cancelled: exit 3.
    expect(await term.exit, term.screen().join('\n')).toBe(3)

    const screen = term.screen()
    expect(screen).toContain('First part of the answer')
    expect(screen.filter((line) => line.includes('First part'))).toEqual(['First part of the answer'])
    expect(screen.at(-1)).toMatch(/^goalkeeper: to continue this session: goalkeeper --cwd .* chat --session \S+$/)
  })

  it('a call outside the permission mode is asked at the prompt: the command shown, yes once, always, no', async () => {
    const p = await project({
      script: `export default [
  { toolCalls: [{ name: 'run_command', arguments: { command: 'echo hi > hi.txt' } }] },
  { toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'a' } }] },
  { toolCalls: [{ name: 'write_file', arguments: { path: 'b.txt', content: 'b' } }] },
  { toolCalls: [{ name: 'run_command', arguments: { command: 'echo no > no.txt' } }] },
  { text: 'All asked.' },
]`,
      extraYml: "- id: permissions\n  name: '@goalkeeper/permissions'\n  config: { mode: \"${GOALKEEPER_PERMISSIONS:-workspace-write}\" }\n",
    })
    const term = startOnTerminal([...p.globals, '--permissions', 'read-only', 'chat'])
    await term.until(/^>$/m)
    expect(term.screen().join('\n')).toMatch(/permissions read-only \(sandboxed, no network\); the rest ask you/)
    term.keys('go\r')
    await term.until(/permission needed: run_command runs a command, which the read-only permission mode does not allow without asking\n.*\$ echo hi > hi.txt\n.*allow\? \[y\]es once, \[a\]lways in this session, \[n\]o >$/)
    term.keys('maybe\r')
    await term.until(/"maybe" is not an answer: type y, a or n\n.*allow\? .*>$/)
    term.keys('y\r')
    await term.until(/permission needed: write_file changes files[^\n]*\n.*write_file \{"path":"a.txt","content":"a"\}\n.*allow\? .*>$/)
    // Always: the second write_file is not asked about.
    term.keys('a\r')
    await term.until(/\$ echo no > no.txt\n.*allow\? .*>$/)
    term.keys('n\r')
    await term.until(/^All asked\.$/m)
    await term.until(/^>$/m)
    term.keys('\x04')
    expect(await term.exit, term.screen().join('\n')).toBe(0)
    const { readdir } = await import('node:fs/promises')
    expect((await readdir(p.workspace)).sort()).toEqual(['a.txt', 'b.txt', 'hi.txt'])
  })

  it('a model stream that breaks after output: the cut-off text is marked, a line says it is asked again, the answer starts on its own line', async () => {
    // A real (local) HTTP model: the first answer stops after "Hello!" when the connection drops.
    const server = await serve([(res) => {
      startSse(res)
      res.write(delta({ role: 'assistant', content: 'Hello!' }), () => res.socket!.destroy())
    }, textReply("I'm unable to say more.")])
    const p = await project(localModelProject(server.url))
    const term = startOnTerminal([...p.globals, 'run', 'greet me'])
    expect(await term.exit, term.screen().join('\n')).toBe(0)
    const screen = term.screen()
    const cut = screen.indexOf('Hello! [cut off]')
    expect(cut, screen.join('\n')).toBeGreaterThanOrEqual(0)
    expect(screen.slice(cut + 1, cut + 3)).toEqual(['  model stream broke after 1 frame; asking again (1 of 1)', "I'm unable to say more."])
    expect(screen.join('\n')).not.toContain("Hello!I'm")
  })
})
