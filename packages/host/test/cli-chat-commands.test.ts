// Chat's own commands through the real CLI with piped input: /diff, /cost, /model, /clear, /resume and an
// aligned /help. Each line waits for the output of the one before, as a person would.
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
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

/** `write NAME` writes NAME; each call reports a usage that grows with the history, so sums tell calls apart. */
const WRITER = `export default many((request) => {
  const users = request.messages.filter((message) => message.role === 'user').map(textOf)
  const usage = { inputTokens: 10 + users.length, outputTokens: 1 + users.length, cachedInputTokens: users.length }
  const file = /^write (\\S+)$/.exec(users.at(-1) ?? '')
  if (file && !turnResults(request).length) return { toolCalls: [{ name: 'write_file', arguments: { path: file[1], content: 'new\\n' } }], usage }
  return { text: 'heard: ' + users.at(-1), usage }
})`

/** What a whole replay of the session's log says: its records read from the first line, as `show` reads them. */
async function wholeFigures(dir: string, id?: string) {
  const logs = (await readdir(dir)).filter((name) => name.endsWith('.jsonl'))
  if (!id) expect(logs).toHaveLength(1)
  const file = id ? `${id}.jsonl` : logs[0]
  const records = (await readFile(path.join(dir, file), 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as { seq: number; type: string; data: Record<string, unknown> })
  const usage = { in: 0, cached: 0, out: 0, calls: 0 }
  const calls = new Map<unknown, Record<string, unknown>>()
  const files = new Set<string>()
  let edits = 0
  for (const { type, data } of records) {
    const reported = data?.usage as { inputTokens: number; outputTokens: number; cachedInputTokens?: number } | undefined
    if ((type === 'assistant/message' || type === 'context/compacted') && reported) {
      usage.in += reported.inputTokens
      usage.cached += reported.cachedInputTokens ?? 0
      usage.out += reported.outputTokens
      usage.calls++
    }
    if (type === 'tool/call') calls.set(data.callId, data)
    if (type === 'tool/result' && data.ok && calls.get(data.callId)?.name === 'write_file') {
      edits++
      files.add(JSON.parse(calls.get(data.callId)!.arguments as string).path)
    }
  }
  return {
    id: file.replace(/\.jsonl$/, ''),
    checkpoints: records.filter((record) => record.type === 'session/checkpoint').length,
    turns: records.filter((record) => record.type === 'turn/end').length,
    cost: `session: ${usage.in} in (${usage.cached} cached), ${usage.out} out in ${usage.calls} model calls; cost $0.00`,
    diff: `${edits} edit${edits === 1 ? '' : 's'} in ${files.size} file${files.size === 1 ? '' : 's'}`,
  }
}

describe('chat commands', { timeout: CLI_TIMEOUT }, () => {
  it('/cost, /diff and /resume count the whole session after it let go of its head, and after it was opened from its last checkpoint', async () => {
    const p = await project({ script: WRITER, config: { session: { checkpointEvery: 4 } } })
    const chat = start([...p.globals, 'chat'], { stdin: 'pipe' })
    for (const line of ['write a.txt', 'write b.txt', 'one', 'two', 'three']) {
      chat.type(line)
      await chat.waitFor('stdout', new RegExp(`heard: ${line}\n`))
    }
    chat.type('/cost')
    await chat.waitFor('stdout', /^session: .*\n/m)
    chat.type('/diff')
    chat.child.stdin!.end()
    expect(await chat.exited(), chat.stderr()).toBe(0)
    const first = await wholeFigures(p.sessions)
    expect(first.checkpoints).toBeGreaterThan(2)
    const out = chat.stdout().split('\n')
    expect(out).toContain(first.cost)
    expect(first.diff).toBe('2 edits in 2 files')
    const diff = out.indexOf(first.diff)
    expect(diff).toBeGreaterThan(0)
    // The edits were made before the checkpoint the live session holds from: counted, not shown.
    expect(out[diff + 1]).toMatch(new RegExp(`^2 earlier edits, before the checkpoint at record \\d+, are not held here: .*show ${first.id} shows them$`))

    // Opened again from its last checkpoint: the same figures, and they go on counting.
    const again = start([...p.globals, 'chat', '--resume', first.id], { stdin: 'pipe' })
    again.type('/cost')
    await again.waitFor('stdout', /^session: .*\n/m)
    again.type('write c.txt')
    await again.waitFor('stdout', /heard: write c\.txt\n/)
    again.type('/clear')
    await again.waitFor('stdout', /^new session /m)
    again.type(`/resume ${first.id}`)
    await again.waitFor('stdout', /^resumed session .*\n/m)
    again.type('/cost')
    await again.waitFor('stdout', /^resumed session .*\n(.*\n)*session: .*\n/m)
    again.type('/diff')
    again.child.stdin!.end()
    expect(await again.exited(), again.stderr()).toBe(0)
    const lines = again.stdout().split('\n')
    expect(lines[0]).toBe(first.cost)
    const second = await wholeFigures(p.sessions, first.id)
    expect(lines).toContain(`resumed session ${first.id} (${second.turns} turns so far)`)
    expect(second.turns).toBe(6)
    expect(lines.filter((line) => line.startsWith('session: ')).at(-1)).toBe(second.cost)
    expect(second.diff).toBe('3 edits in 3 files')
    expect(lines).toContain(second.diff)
  })

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
