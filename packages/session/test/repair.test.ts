import { spawn } from 'node:child_process'
import { once } from 'node:events'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import type { RepairReport, Session } from '@goalkeeper/session'
import { nodeArgs } from '@goalkeeper/test-kit'
import { appsPerTest, BATCHED, describeOnFiles, itOnFiles, readLines, readLog, TEST_KEY, tempDir, writeSession } from './helpers.ts'

const launch = appsPerTest()
const here = path.dirname(fileURLToPath(import.meta.url))

const INTERRUPTED = { ok: false, content: expect.any(String), error: { code: 'INTERRUPTED', message: expect.any(String) } }

async function snapshot(file: string) {
  const [bytes, stat] = await Promise.all([fs.readFile(file), fs.stat(file)])
  return { bytes, mtimeMs: stat.mtimeMs, size: stat.size }
}

describe('crash repair on open for writing', () => {
  itOnFiles('cuts a torn last line, keeps its bytes in a side file and reports it', async () => {
    const dir = await tempDir()
    const torn = '{"seq":3,"at":1003,"type":"test/item","data":{"ha'
    const file = await writeSession(dir, 'torn', [{ type: 'test/item', data: 1 }, { type: 'test/item', data: 2 }], torn)
    const good = (await fs.readFile(file, 'utf8')).slice(0, -torn.length)
    const { root, sessions, waitLog } = await launch(dir)
    const reported = new Promise<[Session, RepairReport]>((resolve) => root.on('session/repaired', (s, r) => resolve([s, r])))

    const session = await sessions.open('torn')
    const [eventSession, report] = await reported
    expect(eventSession).toBe(session)
    expect(session.repair).toBe(report)
    expect(report).toEqual({ sessionId: 'torn', file, tornBytes: Buffer.byteLength(torn), sideFile: expect.stringMatching(/torn\.jsonl\.torn-\d+-[0-9a-f]{12}$/), appended: [] })
    expect(await fs.readFile(report.sideFile!, 'utf8')).toBe(torn)
    expect(await fs.readFile(file, 'utf8')).toBe(good)
    expect(session.records.map((r) => r.data)).toEqual([expect.anything(), 1, 2])
    expect((await waitLog((l) => l.type === 'warn' && l.text.includes('torn'))).text).toContain(report.sideFile)

    session.append('test/item', 3)
    await sessions.flush(session)
    expect((await readLines(file)).map((r) => r.seq)).toEqual([0, 1, 2, 3])
  })

  // A write killed part way through a batch leaves whole lines of it without the rest: none of them verifies.
  for (const cut of BATCHED ? ['whole lines', 'whole lines and a torn one'] : []) {
    itOnFiles(`cuts a batch written part way (${cut}) from its first line, like a torn line`, async () => {
      const dir = await tempDir()
      const file = await writeSession(dir, 'batch', [{ type: 'test/item', data: 1 }, { type: 'test/item', data: 2 }, { type: 'test/item', data: 3 }, { type: 'test/item', data: 4 }])
      const lines = (await fs.readFile(file, 'utf8')).split('\n')
      expect(lines[1]).toContain('"batch":4,"mac":')
      const good = `${lines[0]}\n`
      const torn = `${lines.slice(1, 3).join('\n')}\n${cut === 'whole lines' ? '' : lines[3].slice(0, 20)}`
      await fs.writeFile(file, good + torn)
      const { sessions } = await launch(dir)
      const read = await sessions.open('batch', { readOnly: true })
      expect(read.records.map((r) => r.seq)).toEqual([0])
      expect(read.integrity).toEqual({ state: 'signed', lines: 1, unsignedPrefix: 0 })
      const session = await sessions.open('batch')
      expect(session.repair).toMatchObject({ tornBytes: Buffer.byteLength(torn), appended: [] })
      expect(await fs.readFile(session.repair!.sideFile!, 'utf8')).toBe(torn)
      expect(await fs.readFile(file, 'utf8')).toBe(good)
      session.append('test/item', 'again')
      await sessions.close(session)
      expect((await readLines(file)).map((r) => r.data)).toEqual([expect.anything(), 'again'])
      expect((await (await launch(dir)).sessions.open('batch')).integrity).toMatchObject({ state: 'signed', lines: 2 })
    })
  }

  itOnFiles('treats an unparsable complete last line as torn', async () => {
    const dir = await tempDir()
    const garbage = '\0\0\0\0\0\0\n'
    const file = await writeSession(dir, 'zeros', [{ type: 'test/item', data: 1 }], garbage)
    const { sessions } = await launch(dir)
    const session = await sessions.open('zeros')
    expect(session.repair?.tornBytes).toBe(garbage.length)
    expect(await fs.readFile(session.repair!.sideFile!, 'utf8')).toBe(garbage)
    expect(await readLines(file)).toEqual(session.records)
  })

  it('closes open tool calls, the open step and the open turn as interrupted', async () => {
    const dir = await tempDir()
    const calls = [
      { id: 'c1', name: 'read', arguments: '{"path":"a"}' },
      { id: 'c2', name: 'run', arguments: '{}' },
      { id: 'c3', name: 'edit', arguments: '{"x":1}' },
    ]
    const file = await writeSession(dir, 'crashed', [
      { type: 'turn/start', data: { turn: 1 } },
      { type: 'step/start', data: { turn: 1, step: 1 } },
      { type: 'assistant/message', data: { turn: 1, step: 1, text: '', toolCalls: calls } },
      { type: 'tool/call', data: { turn: 1, step: 1, callId: 'c1', name: 'read', arguments: '{"path":"a"}' } },
      { type: 'tool/result', data: { turn: 1, step: 1, callId: 'c1', ok: true, content: 'file a' } },
      { type: 'tool/call', data: { turn: 1, step: 1, callId: 'c2', name: 'run', arguments: '{}' } },
    ])
    const { sessions } = await launch(dir)
    const session = await sessions.open('crashed')
    const appended = session.records.slice(7)
    expect(appended.map((r) => [r.seq, r.type])).toEqual([
      [7, 'tool/result'],
      [8, 'tool/call'],
      [9, 'tool/result'],
      [10, 'step/end'],
      [11, 'turn/end'],
    ])
    expect(appended[0].data).toEqual({ turn: 1, step: 1, callId: 'c2', ...INTERRUPTED })
    expect(appended[1].data).toEqual({ turn: 1, step: 1, callId: 'c3', name: 'edit', arguments: '{"x":1}' })
    expect(appended[2].data).toEqual({ turn: 1, step: 1, callId: 'c3', ...INTERRUPTED })
    expect(appended[3].data).toEqual({ turn: 1, step: 1 })
    expect(appended[4].data).toEqual({ turn: 1, outcome: { kind: 'interrupted' } })
    expect(session.repair).toEqual({ sessionId: 'crashed', file, tornBytes: 0, appended })
    expect(await readLines(file)).toEqual(session.records)

    // The repair is durable and complete: a second open finds nothing to do.
    await sessions.close(session)
    const again = await sessions.open('crashed')
    expect(again.repair).toBeUndefined()
    expect(again.records).toHaveLength(12)
  })

  it('ends an open turn whose step already ended, and leaves finished turns alone', async () => {
    const dir = await tempDir()
    await writeSession(dir, 'between', [
      { type: 'turn/start', data: { turn: 1 } },
      { type: 'turn/end', data: { turn: 1, outcome: { kind: 'completed' } } },
      { type: 'turn/start', data: { turn: 2 } },
      { type: 'step/start', data: { turn: 2, step: 1 } },
      { type: 'step/end', data: { turn: 2, step: 1 } },
    ])
    const { sessions } = await launch(dir)
    const session = await sessions.open('between')
    expect(session.repair?.appended.map((r) => [r.type, r.data])).toEqual([['turn/end', { turn: 2, outcome: { kind: 'interrupted' } }]])
  })

  it('appends nothing and reports nothing for a cleanly closed session', async () => {
    const dir = await tempDir()
    const file = await writeSession(dir, 'clean', [{ type: 'turn/start', data: { turn: 1 } }, { type: 'turn/end', data: { turn: 1, outcome: { kind: 'completed' } } }])
    const before = await readLog(file)
    const { root, sessions } = await launch(dir)
    let reported = false
    root.on('session/repaired', () => void (reported = true))
    const session = await sessions.open('clean')
    expect(session.repair).toBeUndefined()
    expect(reported).toBe(false)
    expect(await readLog(file)).toEqual(before)
  })
})

describeOnFiles('corruption and read-only opens', () => {
  it('fails on a corrupt line before the last, naming file and line, and leaves the file untouched', async () => {
    const dir = await tempDir()
    const file = await writeSession(dir, 'corrupt', [{ type: 'turn/start', data: { turn: 1 } }], '{"seq":2,"at":1,"type":"x","data":{"secret":"sk-123"\n{"seq":3,"at":1,"type":"x","data":{}}\n')
    const before = await snapshot(file)
    const { sessions } = await launch(dir)
    for (const options of [{}, { readOnly: true }]) {
      const error = await sessions.open('corrupt', options).then(() => undefined, (e: unknown) => e)
      expect(error).toMatchObject({ name: 'SessionError', code: 'SESSION_CORRUPT', file, line: 3, message: expect.stringContaining(`${file}:3`) })
      expect((error as Error).message).not.toContain('sk-123')
    }
    expect(await snapshot(file)).toEqual(before)
    expect(await fs.readdir(dir)).toEqual(['corrupt.jsonl'])
    expect(sessions.get('corrupt')).toBeUndefined()
  })

  it('treats an unparsable complete line as corrupt when a torn last line follows it, in open and list alike', async () => {
    const dir = await tempDir()
    const file = await writeSession(dir, 'twice', [{ type: 'turn/start', data: { turn: 1 } }], '\0\0\0\0\n{"seq":3,"at":10')
    const before = await snapshot(file)
    const { sessions } = await launch(dir)
    for (const options of [{}, { readOnly: true }]) {
      await expect(sessions.open('twice', options)).rejects.toMatchObject({ code: 'SESSION_CORRUPT', file, line: 3, message: expect.stringContaining(`${file}:3`) })
    }
    // Listed with its problem, never hidden.
    expect((await sessions.list()).map((summary) => [summary.id, summary.problem?.line, summary.problem?.reason])).toEqual([['twice', 3, `${file}:3: line is not valid JSON`]])
    expect(await snapshot(file)).toEqual(before)
    // Listing keeps the log's summary (its problem) in the index, and writes nothing else.
    expect((await fs.readdir(dir)).sort()).toEqual(['.summaries', 'twice.jsonl'])
  })

  it('fails on a gap in seq with the line that breaks contiguity', async () => {
    const dir = await tempDir()
    const file = path.join(dir, 'gap.jsonl')
    const lines = [
      { seq: 0, at: 1, type: 'session/header', data: { version: 1, id: 'gap', createdAt: 1, cwd: '/' } },
      { seq: 1, at: 1, type: 'x', data: {} },
      { seq: 3, at: 1, type: 'x', data: {} },
      { seq: 4, at: 1, type: 'x', data: {} },
    ]
    await fs.writeFile(file, lines.map((l) => `${JSON.stringify(l)}\n`).join(''))
    const { sessions } = await launch(dir)
    await expect(sessions.open('gap')).rejects.toMatchObject({ code: 'SESSION_BAD_SEQ', line: 3, file })
  })

  it('never writes on a read-only open, even with a torn line and an open turn', async () => {
    const dir = await tempDir()
    const file = await writeSession(dir, 'view', [{ type: 'turn/start', data: { turn: 1 } }, { type: 'step/start', data: { turn: 1, step: 1 } }], '{"seq":3,"at"')
    const before = await snapshot(file)
    const { sessions } = await launch(dir)
    const session = await sessions.open('view', { readOnly: true })
    expect(session.readOnly).toBe(true)
    expect(session.repair).toBeUndefined()
    expect(session.records.map((r) => r.type)).toEqual(['session/header', 'turn/start', 'step/start'])
    expect(() => session.append('x', {})).toThrow(expect.objectContaining({ code: 'SESSION_READ_ONLY' }))
    await sessions.flush(session)
    await sessions.close(session)
    expect(await snapshot(file)).toEqual(before)
    expect(await fs.readdir(dir)).toEqual(['view.jsonl'])
  })

  it('fails on a file without a complete header', async () => {
    const dir = await tempDir()
    await fs.writeFile(path.join(dir, 'empty.jsonl'), '')
    await fs.writeFile(path.join(dir, 'other.jsonl'), `${JSON.stringify({ seq: 0, at: 1, type: 'session/header', data: { version: 1, id: 'someone-else', createdAt: 1, cwd: '/' } })}\n`)
    const { sessions } = await launch(dir)
    await expect(sessions.open('empty')).rejects.toMatchObject({ code: 'SESSION_CORRUPT', line: 1 })
    await expect(sessions.open('other')).rejects.toThrow(/does not match the file name/)
  })
})

describeOnFiles('secrets', () => {
  it('never quotes record contents in logs or errors: repair, corruption, listing and write failures', async () => {
    const secret = 'sk-live-0123456789abcdef'
    const dir = await tempDir()
    await writeSession(dir, 'torn', [{ type: 'input/queued', data: { message: { id: 'm', content: [{ type: 'text', text: secret }], source: { kind: 'human' } } } }], `{"seq":2,"at":1,"type":"x","data":"${secret}`)
    await writeSession(dir, 'corrupt', [{ type: 'x', data: secret }], `{"seq":2,"data":"${secret}"\n{"seq":3}\n`)
    await writeSession(dir, 'badseq', [{ type: 'x', data: secret }], `{"seq":7,"at":1,"type":"${secret}","data":"${secret}"}\n`)
    const { sessions, logs } = await launch(dir)
    const errors: string[] = []
    const problems = (await sessions.list()).flatMap((summary) => (summary.problem ? [summary.problem.reason] : []))
    expect(problems).toHaveLength(2)
    const torn = await sessions.open('torn')
    for (const id of ['corrupt', 'badseq']) await sessions.open(id).catch((e: Error) => errors.push(`${e.message} ${e.stack}`))
    // A write failure: the directory disappears under a session with unflushed secret records.
    torn.append('tool/result', { turn: 1, step: 1, callId: 'c', ok: true, content: secret })
    await fs.rm(dir, { recursive: true })
    await sessions.flush(torn).catch((e: Error) => errors.push(`${e.message} ${e.stack}`))
    expect(errors).toHaveLength(3)
    expect(logs.filter((l) => l.type === 'warn').length).toBeGreaterThanOrEqual(1)
    for (const text of [...errors, ...problems, ...logs.map((l) => l.text)]) expect(text).not.toContain(secret)
  })
})

describeOnFiles('a repair killed at any step', () => {
  it('a repair killed before any of its file changes, run again, leaves one side file, no temp file, and each repair record once', { timeout: 180_000 }, async () => {
    const torn = '{"seq":4,"at":1004,"type":"tool/res'
    const records = [
      { type: 'turn/start', data: { turn: 1 } },
      { type: 'step/start', data: { turn: 1, step: 1 } },
      { type: 'tool/call', data: { turn: 1, step: 1, callId: 'c1', name: 'run', arguments: '{}' } },
    ]
    const expected = ['session/header', 'turn/start', 'step/start', 'tool/call', 'tool/result', 'step/end', 'turn/end']
    let finished = false
    for (let killAt = 1; !finished; killAt++) {
      expect(killAt, 'the repair never finished').toBeLessThan(60)
      const dir = await tempDir()
      const file = await writeSession(dir, 's', records, torn)
      const child = spawn(process.execPath, [...nodeArgs(path.join(here, 'fixtures/repair-kill-child.ts')), dir, 's', String(killAt), TEST_KEY], { stdio: ['ignore', 'pipe', 'inherit'] })
      let out = ''
      child.stdout.on('data', (chunk) => (out += chunk))
      const [code, signal] = await once(child, 'exit')
      finished = code === 0
      // Every change the repair makes was a kill point before it finished untouched.
      if (finished) expect(out).toBe(`done after ${killAt - 1} changes\n`)
      else expect(signal, `step ${killAt}: ${out}`).toBe('SIGKILL')
      // The next open finishes what the killed one began.
      const app = await launch(dir)
      const session = await app.sessions.open('s')
      expect(session.records.map((r) => r.type), `killed before change ${killAt}`).toEqual(expected)
      await app.sessions.close(session)
      // The seal of a log from before seals is written by the first flush that gets that far: present or not.
      // The seal and the listing's index (the writer's entry) aside: the log, one side file, no temp file.
      const names = (await fs.readdir(dir)).filter((name) => name !== 's.jsonl.seal' && !name.startsWith('.summaries')).sort()
      expect(names, `killed before change ${killAt}`).toEqual(['s.jsonl', expect.stringMatching(/^s\.jsonl\.torn-/)])
      expect(await fs.readFile(path.join(dir, names[1]), 'utf8')).toBe(torn)
      expect((await readLines(file)).map((r) => r.seq)).toEqual([0, 1, 2, 3, 4, 5, 6])
    }
  })

  it('leaves the temp files of a running writer alone: its own process, or another host\'s for a minute', async () => {
    const dir = await tempDir()
    await writeSession(dir, 's', [])
    const own = `.s.jsonl.${os.hostname().replace(/[^A-Za-z0-9-]/g, '_')}-${process.pid}-0123abcd.tmp`
    const foreign = '.s.jsonl.torn-5-abc.elsewhere-4242-0123abcd.tmp'
    const dead = `.s.jsonl.lock.${os.hostname().replace(/[^A-Za-z0-9-]/g, '_')}-999999999-0123abcd.tmp`
    for (const name of [own, foreign, dead]) await fs.writeFile(path.join(dir, name), 'x')
    const { sessions } = await launch(dir)
    await sessions.close(await sessions.open('s'))
    expect((await fs.readdir(dir)).sort()).toEqual([own, foreign, 's.jsonl'].sort())
  })
})
