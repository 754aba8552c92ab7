import { writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { readSession, run, sessionIdOf, snapshot, start, useProject } from './cli-helpers.ts'

const project = useProject()

// The second turn of a session waits until the test creates `release`, so a writer can be held open.
const holdSecondTurn = `export default many(async (request) => {
  const users = request.messages.filter((message) => message.role === 'user')
  if (users.length > 1) await released('release')
  return { text: 'Answer ' + users.length + '.' }
})`

describe('sessions on disk', { timeout: 60_000 }, () => {
  it('a second writer of a session is refused with exit 64, naming the holder, and writes nothing', async () => {
    const p = await project({ script: holdSecondTurn })
    const first = await run([...p.globals, 'run', 'hello'])
    expect(first.code, first.stderr).toBe(0)
    const id = sessionIdOf(first.stderr)
    const holder = start([...p.globals, 'resume', id, 'second'])
    await holder.waitFor('stderr', /\(resumed\)/)
    const refused = await run([...p.globals, 'resume', id, 'third'])
    expect(refused.code).toBe(64)
    expect(refused.stderr).toMatch(new RegExp(`goalkeeper: session ${id} is open for writing by pid ${holder.child.pid} on ${os.hostname()} since \\d{4}-[^ ]+Z \\(hint: wait for that process to finish, or read the session with show\\)`))
    const json = await run([...p.globals, '--json', 'run', '--session', id, 'fourth'])
    expect(json.code).toBe(64)
    expect(JSON.parse(json.stdout.trim().split('\n').at(-1)!)).toMatchObject({ type: 'error', exitCode: 64 })
    // Readers do not wait for the writer.
    const shown = await run([...p.globals, 'show', id])
    expect(shown.code, shown.stderr).toBe(0)
    await writeFile(path.join(p.dir, 'release'), '')
    expect(await holder.exit).toBe(0)
    // Every line parses, seqs are contiguous, and only the holder's turns are there.
    const records = await readSession(p, id)
    expect(records.map((r) => r.seq)).toEqual(records.map((_, i) => i))
    expect(records.filter((r) => r.type === 'user/message').map((r) => r.data.content[0].text)).toEqual(['hello', 'second'])
    // The lock went with the holder: only the session file is left.
    expect(Object.keys(await snapshot(p))).toEqual([`${id}.jsonl`])
  })
})
