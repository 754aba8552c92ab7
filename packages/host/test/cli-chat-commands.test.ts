// Chat's own commands through the real CLI with piped input: /diff, /cost, /model, /clear, /resume and an
// aligned /help. Each line waits for the output of the one before, as a person would.
import { describe, expect, it } from 'vitest'
import { CLI_TIMEOUT, run, start, useProject } from '@goalkeeper/test-kit'

const project = useProject()

/** Echoes every user message of the history and the model id; `make a file` first writes n.txt. */
const ECHO = `export default many((request) => {
  const users = request.messages.filter((message) => message.role === 'user').map(textOf)
  const usage = { inputTokens: 10, outputTokens: 2 }
  if (users.at(-1) === 'make a file' && !turnResults(request).length) {
    return { toolCalls: [{ name: 'write_file', arguments: { path: 'n.txt', content: 'new\\n' } }], usage }
  }
  return { text: 'heard: ' + users.join(' | ') + ' via ' + (request.model ?? 'default'), usage }
})`

describe('chat commands', { timeout: CLI_TIMEOUT }, () => {
  it('/diff shows the session\'s edits, /cost its tokens and cost, /model switches the model and keeps the history', async () => {
    const p = await project({ script: ECHO })
    const chat = start([...p.globals, 'chat'], { stdin: 'pipe' })
    chat.type('make a file')
    await chat.waitFor('stdout', /heard: make a file via default\n/)
    chat.type('/diff')
    await chat.waitFor('stdout', /\+new\n/)
    chat.type('/cost')
    await chat.waitFor('stdout', /^session: .*\n/m)
    chat.type('/model scripted/tiny-2')
    await chat.waitFor('stdout', /goes on with it\n/)
    chat.type('after the switch')
    await chat.waitFor('stdout', /after the switch via tiny-2\n/)
    chat.type('/model')
    chat.child.stdin!.end()
    expect(await chat.exited(), chat.stderr()).toBe(0)
    expect(chat.stdout()).toBe([
      'heard: make a file via default',
      '1 edit in 1 file',
      'write_file n.txt: +1 -0 lines',
      '  --- /dev/null',
      '  +++ b/n.txt',
      '  @@ -0,0 +1 @@',
      '  +new',
      // The scripted model is offline: nothing to pay.
      'session: 20 in, 4 out in 2 model calls; cost $0.00',
      'model scripted/tiny-2 (offline); the conversation goes on with it',
      'heard: make a file | after the switch via tiny-2',
      'model scripted (offline)',
      '',
    ].join('\n'))
    // The session went on: one session, not two.
    const sessions = await run([...p.globals, 'sessions'])
    expect(sessions.stdout.trim().split('\n').filter((line) => /^\d{8}-/.test(line))).toHaveLength(1)
  })

  it('/clear starts a new session without the history or the goal; /resume lists sessions and returns to one', async () => {
    const p = await project({ script: ECHO })
    const chat = start([...p.globals, 'chat'], { stdin: 'pipe' })
    chat.type('/goal keep the notes short')
    chat.type('first')
    await chat.waitFor('stdout', /heard: .*first via default\n/)
    chat.type('/goal pause')
    chat.type('/clear')
    await chat.waitFor('stdout', /^new session \S+; the previous one is saved as \S+ and keeps its goal \(\/resume \S+ returns to it\)\n/m)
    const [, fresh, old] = /^new session (\S+); the previous one is saved as (\S+) /m.exec(chat.stdout())!
    chat.type('second')
    await chat.waitFor('stdout', /heard: second via default\n/)
    chat.type('/goal')
    chat.type('/resume')
    await chat.waitFor('stdout', /^recent sessions of this project.*\n(.*\n){2}/m)
    chat.type(`/resume ${old}`)
    await chat.waitFor('stdout', /^resumed session .*\n/m)
    chat.type('third')
    await chat.waitFor('stdout', /third via default\n/)
    chat.child.stdin!.end()
    // The resumed session's goal is paused: chat ends with the goal's code, 3.
    expect(await chat.exited(), chat.stderr()).toBe(3)
    const out = chat.stdout()
    expect(out).toContain('heard: second via default\n')
    // The goal is shown by what it is, not by its internal id.
    expect(out).toMatch(/^Goal set\.\nObjective: keep the notes short\n/m)
    expect(out + chat.stderr()).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-/)
    expect(out).toContain('No goal. Set one with /goal <objective>.\n')
    const listing = out.slice(out.indexOf('recent sessions')).split('\n').slice(1, 3)
    expect(listing[0]).toMatch(new RegExp(`^  ${fresh} \\*  \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d`))
    expect(listing[1]).toMatch(new RegExp(`^  ${old} +\\d{4}-`))
    expect(out).toContain(`resumed session ${old} (1 turn so far)\n`)
    expect(out).toMatch(/heard: .*first \| third via default\n/)
  })

  it('/help lines up its columns', async () => {
    const p = await project({ script: ECHO })
    const chat = start([...p.globals, 'chat'], { stdin: 'pipe' })
    chat.child.stdin!.end('/help\n')
    expect(await chat.exited(), chat.stderr()).toBe(0)
    const lines = chat.stdout().split('\n').filter((line) => line.startsWith('/') || line.startsWith(' '))
    for (const name of ['/model', '/cost', '/diff', '/clear', '/resume', '/compact', '/goal pause | resume | clear']) {
      expect(lines.some((line) => line.startsWith(name)), name).toBe(true)
    }
    lines.forEach((line, index) => {
      // A description starts at column 28: after the command, or on the next line under a long command.
      const at = line.startsWith(' ') ? line.search(/\S/) : line.search(/ {2,}\S/) < 0 ? -1 : line.search(/ {2,}\S/) + line.slice(line.search(/ {2,}\S/)).search(/\S/)
      if (at < 0) expect(lines[index + 1]?.search(/\S/), `${line} has its description below`).toBe(28)
      else expect(at, line).toBe(28)
    })
  })
})
