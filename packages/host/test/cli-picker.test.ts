// The session picker of `chat --resume` and `/resume` on a real terminal (a pseudo-terminal made by
// util-linux `script`): real keys move, pick and cancel; without a terminal, an id is needed instead.
import { describe, expect, it } from 'vitest'
import { CLI_TIMEOUT, run, sessionIdOf, start, useProject } from '@goalkeeper/test-kit'
import { startOnTerminal } from './on-terminal.ts'

const project = useProject()
const script = 'export default many(() => ({ text: "noted" }))'
const OLDER = 'write the older notes down'
const NEWER = `write the newer notes down, ${'in words that do not fit the line of a narrow terminal '.repeat(2)}`

/** Two saved sessions, the newer one last; their ids. */
async function twoSessions(globals: string[]) {
  const ids: string[] = []
  for (const prompt of [OLDER, NEWER]) {
    const result = await run([...globals, 'run', prompt])
    expect(result.code, result.stderr).toBe(0)
    ids.push(sessionIdOf(result.stderr))
  }
  return { older: ids[0], newer: ids[1] }
}

describe('picking a session to resume', { timeout: CLI_TIMEOUT }, () => {
  it('chat --resume lists the recent sessions fitted to the width; j and Enter pick the second, /resume picks again, Esc cancels', async () => {
    const p = await project({ script })
    const { older, newer } = await twoSessions(p.globals)
    const term = startOnTerminal([...p.globals, 'chat', '--resume'], { columns: 60 })
    await term.until(/resume which session\?[^\n]*\n> just now +- +write the newer notes down.*\n {2}just now +- +write the older notes down\n.*Enter picks/)
    const list = term.screen()
    for (const line of list) expect(Array.from(line).length, line).toBeLessThan(60)
    expect(list.join('\n')).toContain('…')
    term.keys('j')
    await term.until(/^ {2}just now +- +write the newer.*\n> just now +- +write the older notes down$/m)
    term.keys('\r')
    await term.until(new RegExp(`goalkeeper: session ${older} \\(resumed\\)`))
    await term.until(/^>$/m)
    // The picker is gone from the screen once a session is picked.
    expect(term.screen().join('\n')).not.toMatch(/resume which session/)

    term.keys('/resume\r')
    await term.until(/> just now +- +write the older notes down \(this one\)|> just now +- +write the newer/)
    // Esc cancels: the session in use stays, the prompt is back.
    term.keys('\x1b')
    await term.until(/^>$/m)
    expect(term.screen().join('\n')).not.toMatch(/resume which session/)
    term.keys('/resume\r')
    await term.until(/resume which session\?/)
    // The newer session is on top (the one in use moved up when it was resumed, so look for it by title).
    const rows = term.screen().filter((line) => /just now/.test(line))
    const newerRow = rows.findIndex((line) => line.includes('newer'))
    term.keys('k'.repeat(3) + 'j'.repeat(newerRow) + '\r')
    await term.until(new RegExp(`resumed session ${newer} \\(1 turn so far\\)`))
    term.keys('\x04')
    expect(await term.exit, term.screen().join('\n')).toBe(0)
  })

  it('q at chat --resume leaves without resuming (exit 0); without a terminal an id is needed', async () => {
    const p = await project({ script })
    await twoSessions(p.globals)
    const term = startOnTerminal([...p.globals, 'chat', '--resume'])
    await term.until(/Enter picks/)
    term.keys('q')
    expect(await term.exit, term.screen().join('\n')).toBe(0)
    expect(term.screen().join('\n')).toMatch(/no session picked, so none was resumed/)

    const piped = start([...p.globals, 'chat', '--resume'], { stdin: 'pipe' })
    piped.child.stdin!.end()
    expect(await piped.exited()).toBe(64)
    expect(piped.stderr()).toMatch(/chat --resume needs the session id when not on a terminal .*sessions lists them; --last takes the most recent/)
  })
})
