import { spawn } from 'node:child_process'
import { once } from 'node:events'
import fs from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import type { SummaryFold } from '../src/index.ts'
import { nodeArgs } from '@goalkeeper/test-kit'
import { appsPerTest, closedSessions, countingStore, describeOnFiles, itOnFiles, readLines, TEST_KEY, tempDir, writeSession } from './helpers.ts'

const here = path.dirname(fileURLToPath(import.meta.url))
const repo = path.resolve(here, '../../..')
const launch = appsPerTest()

/** Counts the records of kind "x" of a log: a fold whose result a listing keeps. */
const countX = (version: string): SummaryFold<number> => ({
  version,
  start() {
    let count = 0
    return { add: (record) => void (record.type === 'x' && count++), result: () => count }
  },
})

const withSessions = (dir: string, count: number, atOnce?: number) => closedSessions(launch, dir, count, undefined, atOnce)

describe('listing from kept summaries', () => {
  it('reads a log only when its summary is missing or stale, and carries fold results', async () => {
    const dir = await tempDir()
    const ids = await withSessions(dir, 3)
    const { store, streamed } = await countingStore(dir)
    const { sessions } = await launch(dir, { store })
    const folds = { x: countX('1') }

    const first = await sessions.list({ folds })
    expect(streamed.sort()).toEqual([...ids].sort())
    expect(first.map((s) => s.folds)).toEqual([{ x: 1 }, { x: 1 }, { x: 1 }])
    streamed.length = 0
    expect(await sessions.list({ folds })).toEqual(first)
    expect(streamed).toEqual([])
    // Without folds, the same kept summaries serve.
    expect((await sessions.list()).map(({ folds: _, ...rest }) => rest)).toEqual(first.map(({ folds: _, ...rest }) => rest))
    expect(streamed).toEqual([])

    // One log written again: only it is read.
    const session = await sessions.open(ids[1])
    session.append('x', { again: true })
    await sessions.close(session)
    streamed.length = 0
    const after = await sessions.list({ folds })
    expect(streamed).toEqual([ids[1]])
    expect(after.find((s) => s.id === ids[1])).toMatchObject({ records: 3, folds: { x: 2 } })

    // Another version of a fold: every log is read again.
    streamed.length = 0
    await sessions.list({ folds: { x: countX('2') } })
    expect(streamed.sort()).toEqual([...ids].sort())

    // A removed log leaves the kept summaries too: the next listing reads nothing and does not name it.
    await store.remove(ids[0])
    expect((await sessions.list()).map((s) => s.id).sort()).toEqual([ids[1], ids[2]].sort())
    streamed.length = 0
    expect((await sessions.recent({ limit: 5 })).sessions.map((s) => s.id).sort()).toEqual([ids[1], ids[2]].sort())
    expect(streamed).toEqual([])
  })

  itOnFiles('cannot be fooled: a log edited in place (size and mtime kept) is found tampered, a forged summary is rebuilt', async () => {
    const dir = await tempDir()
    const [a, b] = await withSessions(dir, 2)
    const { store, streamed } = await countingStore(dir)
    const { sessions } = await launch(dir, { store })
    await sessions.list()

    // Same length, same mtime: only the change time (set by the kernel) tells.
    const file = path.join(dir, `${a}.jsonl`)
    const { mtime, size } = await fs.stat(file)
    const text = await fs.readFile(file, 'utf8')
    await fs.writeFile(file, text.replace('"i":0', '"i":7'))
    await fs.utimes(file, mtime, mtime)
    expect((await fs.stat(file)).size).toBe(size)
    streamed.length = 0
    const listed = await sessions.list()
    expect(streamed).toEqual([a])
    expect(listed.find((s) => s.id === a)?.problem).toMatchObject({ code: 'SESSION_TAMPERED', line: 2 })

    // An entry edited in the index (more records) does not verify: that log alone is read again.
    const index = path.join(dir, '.summaries')
    const kept = await fs.readFile(index, 'utf8')
    const forged = kept.replace(new RegExp(`("id":"${b}".*?"records":)2`), '$19')
    expect(forged).not.toBe(kept)
    await fs.writeFile(index, forged)
    streamed.length = 0
    const again = await sessions.list()
    expect(streamed).toEqual([b])
    expect(again.find((s) => s.id === b)).toMatchObject({ records: 2 })
    expect(again.find((s) => s.id === a)?.problem?.code).toBe('SESSION_TAMPERED')

    // An unreadable index is rebuilt, never trusted.
    await fs.writeFile(index, 'garbage\n')
    streamed.length = 0
    expect((await sessions.list()).map((s) => s.records)).toEqual([2, 2])
    expect(streamed.sort()).toEqual([a, b].sort())
  })
})

describeOnFiles('streaming replay', () => {
  it('opens a log whose lines cross read chunks and repairs a torn last line that spans two of them, keeping its exact bytes', async () => {
    const dir = await tempDir()
    const big = 'y'.repeat(700_000)
    // Invalid UTF-8 in the tail: the side file must keep the bytes, not a decoding of them.
    const tail = Buffer.concat([Buffer.from(`{"seq":4,"at":1,"type":"x","data":"${'z'.repeat(600_000)}`), Buffer.from([0xff, 0xfe, 0x00])])
    const file = await writeSession(dir, 'wide', [{ type: 'x', data: big }, { type: 'x', data: big }, { type: 'x', data: 'é'.repeat(300_000) }], '')
    await fs.appendFile(file, tail)
    const goodBytes = (await fs.stat(file)).size - tail.length
    const { sessions } = await launch(dir)

    const readOnly = await sessions.open('wide', { readOnly: true })
    expect(readOnly.records.map((r) => r.seq)).toEqual([0, 1, 2, 3])
    expect(readOnly.records[3].data).toBe('é'.repeat(300_000))
    await sessions.close(readOnly)

    const session = await sessions.open('wide')
    expect(session.repair).toMatchObject({ tornBytes: tail.length })
    expect(await fs.readFile(session.repair!.sideFile!)).toEqual(tail)
    expect((await fs.stat(file)).size).toBeGreaterThanOrEqual(goodBytes)
    expect((await readLines(file)).length).toBe(4)
  })

  it('refuses a 2 GiB log up front, naming its size, without reading it', async () => {
    const dir = await tempDir()
    const file = await writeSession(dir, 'huge', [{ type: 'x', data: 1 }], '')
    // Sparse: 2 GiB that take no disk and would take minutes to read.
    await fs.truncate(file, 2 * 2 ** 30)
    const { sessions } = await launch(dir)
    for (const options of [{}, { readOnly: true }]) {
      await expect(sessions.open('huge', options)).rejects.toMatchObject({ code: 'SESSION_TOO_LARGE', message: expect.stringMatching(/^session huge is 2048 MiB, more than the 512 MiB .*maxOpenBytes.*start a new session; goalkeeper show reads it whole as it streams, and fork copies it from its last checkpoint, whatever its size$/) })
    }
    // A streaming read (show, fork) holds no records: no size limit refuses it.
    expect((await sessions.read('huge')).size).toBe(2 * 2 ** 30)
  })
})

describeOnFiles('descriptors', () => {
  it('1,000 sessions open for writing in one process, under ulimit -n 256, each appended to and flushed at once', async () => {
    const dir = await tempDir()
    // Written 20 at a time: one after another, the 1,000 closes (each flushed and synced) took most of the test.
    const ids = await withSessions(dir, 1000, 20)
    const script = `ulimit -n 256 && exec "$0" "$@"`
    const child = spawn('sh', ['-c', script, process.execPath, ...nodeArgs(path.join(here, 'fixtures/many-open-child.ts')), dir, ids.join(','), TEST_KEY], { cwd: repo, stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (data) => (out += data))
    expect((await once(child, 'exit'))[0]).toBe(0)
    expect(JSON.parse(out)).toEqual({ open: 1000 })
    for (const id of [ids[0], ids[500], ids[999]]) {
      const records = await readLines(path.join(dir, `${id}.jsonl`))
      expect(records.map((record) => record.type)).toEqual(['session/header', 'x', 'test/round', 'test/round'])
    }
  }, 240_000)
})
