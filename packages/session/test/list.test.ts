import { spawn } from 'node:child_process'
import { once } from 'node:events'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { appsPerTest, closedSessions, countingStore, human, itOnFiles, tempDir, writeSession } from './helpers.ts'

const launch = appsPerTest()

describe('list', () => {
  it('summarises every session, newest activity first, with human titles', async () => {
    const dir = await tempDir()
    let now = 10_000
    const app = await launch(dir, { clock: () => now })
    const { sessions } = app

    const old = await sessions.create({ cwd: '/work/old' })
    old.append('input/queued', { message: { ...human('m0', 'ignored'), source: { kind: 'goal', goalId: 'g', revision: 1, round: 1 } } })
    old.append('input/queued', { message: human('m1', '  Fix   the\n\tbuild  ') })
    now = 20_000
    const long = await sessions.create({ cwd: '/work/long' })
    long.append('user/message', { ...human('m2', `${'word '.repeat(40)}end`), content: [{ type: 'text', text: ' ' }, { type: 'text', text: `${'word '.repeat(40)}end` }] })
    now = 30_000
    const untitled = await sessions.create({ cwd: '/work/none' })
    untitled.append('user/message', { ...human('m3', 'from a plugin'), source: { kind: 'plugin', name: 'p' } })
    now = 40_000
    old.append('turn/start', { turn: 1 })
    for (const s of [old, long, untitled]) await sessions.close(s)

    const list = await sessions.list()
    expect(list.map((s) => s.id)).toEqual([old.id, untitled.id, long.id])
    expect(list[0]).toEqual({ id: old.id, file: old.file, createdAt: 10_000, updatedAt: 40_000, records: 4, title: 'Fix the build', cwd: '/work/old' })
    expect(list[1].title).toBeUndefined()
    expect(list[2].title).toHaveLength(80)
    expect(list[2].title).toMatch(/^word word .*word…$/)
  })

  itOnFiles('reads a log and its seal at once, and leaves out a log removed while they were read', async () => {
    const dir = await tempDir()
    const [kept, removed] = await closedSessions(launch, dir, 2)
    await fs.rm(path.join(dir, '.summaries.log'))
    const { store } = await countingStore(dir)
    const { version, stream, readSeal } = { version: store.version.bind(store), stream: store.stream.bind(store), readSeal: store.readSeal!.bind(store) }
    // The reads apart, as a log too large for one snapshot is read.
    store.snapshot = undefined
    // The log goes once its version is taken; its seal is given only after reading the log failed, which
    // a listing that waited for the seal before reading the log would never see.
    let failed!: () => void
    const streamFailed = new Promise<void>((resolve) => (failed = resolve))
    store.version = async (id) => {
      const taken = await version(id)
      if (id === removed) await fs.rm(path.join(dir, `${id}.jsonl`))
      return taken
    }
    store.stream = async function* (id, range) {
      try {
        yield* stream(id, range)
      } catch (error) {
        failed()
        throw error
      }
    }
    store.readSeal = async (id) => {
      if (id === removed) await streamFailed
      return readSeal(id)
    }
    const { sessions } = await launch(dir, { store })
    expect((await sessions.list()).map((s) => s.id)).toEqual([kept])
  })

  itOnFiles('counts unwritten records of sessions open here, tolerates a torn last line, lists corrupt files with their problem, skips a FIFO without blocking', async () => {
    const dir = await tempDir()
    await writeSession(dir, 'torn', [{ type: 'input/queued', data: { message: human('m', 'hello') } }], '{"seq":2,')
    await writeSession(dir, 'broken', [{ type: 'x', data: 1 }], 'not json\n{"seq":3}\n')
    await fs.writeFile(path.join(dir, 'notes.txt'), 'not a session')
    await fs.writeFile(path.join(dir, 'torn.jsonl.torn-1'), 'side file')
    // A FIFO named like a session: opening it to read would wait for a writer forever.
    const mkfifo = spawn('mkfifo', [path.join(dir, 'fifo.jsonl')])
    expect((await once(mkfifo, 'exit'))[0]).toBe(0)
    const app = await launch(dir, { flushDelayMs: 60_000 })
    const live = await app.sessions.create({ cwd: dir })
    live.append('x', 1)
    live.append('x', 2)

    const list = await app.sessions.list()
    expect(list.map((s) => [s.id, s.records]).sort()).toEqual([[live.id, 3], ['torn', 2], ['broken', 0]].sort())
    expect(list.find((s) => s.id === 'torn')).toMatchObject({ title: 'hello', updatedAt: 1001, createdAt: 1000, cwd: '/work' })
    expect(list.find((s) => s.id === 'broken')?.problem).toEqual({ code: 'SESSION_CORRUPT', line: 3, reason: `${path.join(dir, 'broken.jsonl')}:3: line is not valid JSON` })
    await expect(app.sessions.open('fifo', { readOnly: true })).rejects.toMatchObject({ code: 'SESSION_CORRUPT', message: expect.stringContaining('is not a regular file') })
    // Listing never repairs: the torn file is left as it was.
    expect((await fs.readFile(path.join(dir, 'torn.jsonl'), 'utf8')).endsWith('{"seq":2,')).toBe(true)
  })

  it('reads a session larger than one stream chunk', async () => {
    const dir = await tempDir()
    const records = Array.from({ length: 3000 }, (_, i) => ({ type: 'x', data: { i, pad: 'é'.repeat(i % 97) } }))
    await writeSession(dir, 'big', records)
    const app = await launch(dir)
    expect(await app.sessions.list()).toEqual([expect.objectContaining({ id: 'big', records: 3001, updatedAt: 4000 })])
  })

  it('returns an empty list when the directory does not exist yet', async () => {
    const dir = path.join(await tempDir(), 'missing')
    const app = await launch(dir)
    expect(await app.sessions.list()).toEqual([])
  })
})
