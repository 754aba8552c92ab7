import { spawn } from 'node:child_process'
import { once } from 'node:events'
import fs from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect } from 'vitest'
import { expectTamperedFlaggedAndRewrittenFirst, nodeArgs } from '@goalkeeper/test-kit'
import { loadKey, Signer } from '../src/integrity.ts'
import { encodeIndex, type IndexEntry, openIndex } from '../src/summary-index.ts'
import { appsPerTest, closedSessions, countingStore, itOnFiles, mark, TEST_KEY, tempDir } from './helpers.ts'

const here = path.dirname(fileURLToPath(import.meta.url))
const repo = path.resolve(here, '../../..')
const launch = appsPerTest()

/** `count` closed sessions, the later ones more recent; their ids, newest first. */
async function sessionsIn(dir: string, count: number): Promise<string[]> {
  let now = 1_000_000
  return (await closedSessions(launch, dir, count, { clock: () => (now += 1000) })).reverse()
}

/** Where the row blocks and id blocks of a compacted index start (its directory says their lengths). */
function blocksOf(index: Buffer): { rows: number[]; ids: number[]; end: number } {
  const first = index.indexOf(10)
  const bytes = Number(index.toString('latin1', 0, first).split(' ')[2])
  const directory = JSON.parse(index.toString('utf8', first + 1, first + 1 + bytes)) as { blocks: [number][]; ids: [string, number][] }
  let at = first + 1 + bytes + 1
  const rows = directory.blocks.map(([length]) => (at += length) - length)
  const ids = directory.ids.map(([, length]) => (at += length) - length)
  return { rows, ids, end: at }
}

/** The index of `dir` written again with `rowsPerBlock` rows a block, signed with `key` (the tests' own by default). */
async function reblock(dir: string, rowsPerBlock: number, key = TEST_KEY): Promise<Buffer> {
  const file = path.join(dir, '.summaries')
  const bytes = await fs.readFile(file)
  const reader = { read: async (start: number, length: number) => bytes.subarray(start, start + length) }
  const entries = new Map<string, IndexEntry>()
  for (const [id, { entry, text }] of await (await openIndex(new Signer(await loadKey(TEST_KEY)), reader, bytes.length)).all()) {
    entries.set(id, { text, updatedAt: entry.summary.updatedAt, madeAt: entry.madeAt ?? 0 })
  }
  const index = encodeIndex(new Signer(await loadKey(key)), entries, rowsPerBlock)
  await fs.writeFile(file, index)
  return index
}

describe('index of kept summaries', () => {
  itOnFiles('answers the most recent sessions by checking only the rows it returns', async () => {
    const dir = await tempDir()
    const ids = await sessionsIn(dir, 12)
    const { store, streamed, versions, reset } = await countingStore(dir)
    const { sessions } = await launch(dir, { store })

    // The writers kept every entry, with the fold-less summary this listing asks for: no log is read.
    const first = await sessions.recent({ limit: 3 })
    expect(first.sessions.map((s) => s.id)).toEqual(ids.slice(0, 3))
    expect(first.total).toBe(12)
    expect(first.sessions[0]).toMatchObject({ records: 2, cwd: dir })
    expect(streamed).toEqual([])
    reset()
    const later = await sessions.recent({ limit: 3 })
    expect(later).toEqual(first)
    expect(versions.sort()).toEqual(ids.slice(0, 3).sort())
    expect(streamed).toEqual([])
    // The whole listing agrees with it.
    expect((await sessions.list()).map((s) => s.id)).toEqual(ids)
  })

  itOnFiles('flags a log edited by hand when it shows it, reading that log only; one written again moves up', async () => {
    const dir = await tempDir()
    const ids = await sessionsIn(dir, 6)
    const { store, streamed, reset } = await countingStore(dir)
    const { sessions } = await launch(dir, { store })
    await sessions.list()

    // Same size and mtime: only the change time tells (the entry keeps the version token).
    const file = path.join(dir, `${ids[1]}.jsonl`)
    const { mtime } = await fs.stat(file)
    await fs.writeFile(file, (await fs.readFile(file, 'utf8')).replace('"i":4', '"i":7'))
    await fs.utimes(file, mtime, mtime)
    await expectTamperedFlaggedAndRewrittenFirst(sessions, ids, { streamed, reset, mark })
  })

  itOnFiles('every project\'s listing keeps what it rebuilt of its own logs, and only reads the other projects\' indexes', async () => {
    const root = await tempDir()
    const [mine, theirs] = [path.join(root, 'mine'), path.join(root, 'theirs')]
    const [ownIds, otherIds] = [await sessionsIn(mine, 3), await sessionsIn(theirs, 2)]
    const { store, streamed, reset } = await countingStore(mine, { everywhere: root })
    const { sessions } = await launch(mine, { store })
    const other = await fs.readFile(path.join(theirs, '.summaries.log'), 'utf8')
    // A fold the writers did not keep: every log is read once, this project's entries kept in its own journal.
    const folds = { x: { version: '1', start: () => ({ add() {}, result: () => 0 }) } }
    const first = await sessions.list({ everywhere: true, folds })
    expect(first.map((s) => s.id).sort()).toEqual([...ownIds, ...otherIds].sort())
    expect(streamed.sort()).toEqual([...ownIds, ...otherIds].sort())
    expect(await fs.readFile(path.join(theirs, '.summaries.log'), 'utf8')).toBe(other)
    reset()
    expect(await sessions.list({ everywhere: true, folds })).toEqual(first)
    expect(streamed.sort()).toEqual([...otherIds].sort())
  })

  itOnFiles('does not trust a tampered, cut or missing index: lists from the logs, says so and rebuilds it', async () => {
    const dir = await tempDir()
    const ids = await sessionsIn(dir, 4)
    const { store, streamed, reset } = await countingStore(dir)
    const app = await launch(dir, { store })
    const { sessions } = app
    const expected = (await sessions.list()).slice(0, 2)
    const index = path.join(dir, '.summaries')
    const good = await fs.readFile(index)
    const warned = () => app.logs.filter((log) => log.text.includes('index of session summaries')).map((log) => log.text)

    const tamper = async (bytes: Buffer, why: string) => {
      await fs.writeFile(index, bytes)
      reset()
      app.logs.length = 0
      expect(await sessions.recent({ limit: 2 })).toEqual({ sessions: expected, total: 4 })
      expect(streamed.sort()).toEqual([...ids].sort())
      expect(warned()).toEqual([expect.stringContaining(why)])
      reset()
      expect((await sessions.recent({ limit: 2 })).sessions).toEqual(expected)
      expect(streamed).toEqual([])
    }
    // One more millisecond in the table's first row: its block no longer verifies.
    const text = good.toString('utf8')
    const row = blocksOf(good).rows[0]
    const updated = text.slice(row, text.indexOf('\n', row)).split(' ')[1]
    await tamper(Buffer.from(text.slice(0, row) + text.slice(row).replace(updated, String(Number(updated) + 1))), 'table block 1 does not verify')
    await tamper(good.subarray(0, 120), 'cut short')
    await tamper(Buffer.from('garbage\n'), 'not an index')

    // A forged journal line is not trusted either.
    await fs.appendFile(`${index}.log`, `${ids[3]} ${'0'.repeat(64)} {"id":"${ids[3]}"}\n`)
    reset()
    app.logs.length = 0
    expect((await sessions.recent({ limit: 2 })).sessions).toEqual(expected)
    expect(warned()).toEqual([expect.stringContaining('journal line 1 does not verify')])

    // Missing, or of the earlier format (one mac over the whole table): built from the logs, nothing to report.
    for (const earlier of [undefined, `goalkeeper-summaries 1 0 ${'0'.repeat(64)}\n`]) {
      if (earlier) await fs.writeFile(index, earlier)
      else await fs.rm(index)
      reset()
      app.logs.length = 0
      expect((await sessions.recent({ limit: 2 })).sessions).toEqual(expected)
      expect(streamed.sort()).toEqual([...ids].sort())
      expect(warned()).toEqual([])
      expect((await fs.readFile(index, 'latin1')).startsWith('goalkeeper-summaries 2 ')).toBe(true)
    }
  })

  itOnFiles('reads only the head blocks of the table it needs, and counts the sessions the journal adds or names without reading the rest', async () => {
    const dir = await tempDir()
    const ids = await sessionsIn(dir, 6)
    const { store, streamed, reset } = await countingStore(dir)
    const app = await launch(dir, { store })
    const { sessions } = app
    await sessions.list()
    const index = await reblock(dir, 2)
    const { rows } = blocksOf(index)
    // A block no listing of the two most recent reads: what it says does not matter to them.
    const text = index.toString('latin1')
    await fs.writeFile(path.join(dir, '.summaries'), Buffer.from(text.slice(0, rows[2]) + 'x' + text.slice(rows[2] + 1), 'latin1'))
    reset()
    expect(await sessions.recent({ limit: 2 })).toMatchObject({ sessions: ids.slice(0, 2).map((id) => ({ id })), total: 6 })
    expect(streamed).toEqual([])

    // A new session (in the journal only) counts; an old one written again (named by the table, in a block
    // not read) comes first and counts once.
    const created = await sessions.create({ cwd: dir })
    created.append('x', { i: 6 })
    await sessions.close(created)
    const old = await sessions.open(ids[4])
    old.append('x', { again: true })
    await sessions.close(old)
    reset()
    expect(await sessions.recent({ limit: 2 })).toMatchObject({ sessions: [{ id: ids[4], records: 3 }, { id: created.id }], total: 7 })
    expect(streamed).toEqual([])

    // A row checked and dropped (its log removed by hand) makes the listing read further down.
    await fs.rm(path.join(dir, `${ids[0]}.jsonl`))
    await fs.rm(path.join(dir, `${ids[1]}.jsonl`))
    reset()
    expect(await sessions.recent({ limit: 3 })).toMatchObject({ sessions: [{ id: ids[4] }, { id: created.id }, { id: ids[2] }], total: 5 })
    expect(streamed).toEqual([])
    // The whole listing reads every block: the one changed above is found, and the index rebuilt.
    app.logs.length = 0
    expect((await sessions.list()).map((s) => s.id)).toEqual([ids[4], created.id, ids[2], ids[3], ids[5]])
    expect(app.logs.map((log) => log.text)).toEqual([expect.stringContaining('table block 3 does not verify')])
    app.logs.length = 0
    expect((await sessions.recent({ limit: 5 })).total).toBe(5)
    expect(app.logs).toEqual([])
  })

  itOnFiles('does not trust a table block that is edited, moved, taken from another index or cut off', async () => {
    const dir = await tempDir()
    const ids = await sessionsIn(dir, 6)
    const { store, streamed, reset } = await countingStore(dir)
    const app = await launch(dir, { store })
    const { sessions } = app
    const expected = (await sessions.list()).slice(0, 3)
    const good = await reblock(dir, 2)
    const { rows, ids: idBlocks, end } = blocksOf(good)
    const index = path.join(dir, '.summaries')
    const warned = () => app.logs.filter((log) => log.text.includes('index of session summaries')).map((log) => log.text)

    const tamper = async (bytes: Buffer, why: string) => {
      await fs.writeFile(index, bytes)
      reset()
      app.logs.length = 0
      // The three most recent are in the first two blocks: the second is read and checked.
      expect(await sessions.recent({ limit: 3 })).toEqual({ sessions: expected, total: 6 })
      expect(streamed.sort()).toEqual([...ids].sort())
      expect(warned()).toEqual([expect.stringContaining(why)])
      reset()
      expect((await sessions.recent({ limit: 3 })).sessions).toEqual(expected)
      expect(streamed).toEqual([])
    }
    const block = (i: number) => good.subarray(rows[i], i + 1 < rows.length ? rows[i + 1] : idBlocks[0])
    // Its rows edited: a session moved to the top of the second block.
    const second = block(1).toString('utf8').split('\n')
    await tamper(Buffer.concat([good.subarray(0, rows[1]), Buffer.from([second[1], second[0], ''].join('\n')), good.subarray(rows[2])]), 'table block 2 does not verify')
    // Blocks swapped: each verifies on its own, not at the other's place.
    await tamper(Buffer.concat([good.subarray(0, rows[0]), block(1), block(0), good.subarray(rows[2])]), 'table block 1 does not verify')
    // The second block of another index signed with the same key (another directory's sessions).
    const otherDir = await tempDir()
    await sessionsIn(otherDir, 6)
    await launch(otherDir).then(({ sessions: others }) => others.list())
    const other = await reblock(otherDir, 2)
    const otherRows = blocksOf(other).rows
    await tamper(Buffer.concat([good.subarray(0, rows[1]), other.subarray(otherRows[1], otherRows[2]), good.subarray(rows[2])]), 'table block 2 does not verify')
    // Cut anywhere (here in the entries, past every block): the directory says how long it is.
    await tamper(good.subarray(0, end + 10), 'cut short')
    await tamper(good.subarray(0, rows[2]), 'cut short')
    // The whole index signed with another key: its directory does not verify.
    const otherKey = path.join(otherDir, 'other.key')
    await fs.writeFile(otherKey, '0'.repeat(64), { mode: 0o600 })
    await tamper(await reblock(dir, 2, otherKey), 'directory does not verify')
  })

  itOnFiles('loses no entry when two processes close sessions at once while listings compact the index', async () => {
    const dir = await tempDir()
    const { store, streamed, reset } = await countingStore(dir)
    const { sessions } = await launch(dir, { store })
    const children = [0, 1].map(() => spawn(process.execPath, [...nodeArgs(path.join(here, 'fixtures/index-child.ts')), dir, '25', TEST_KEY], { cwd: repo, stdio: ['ignore', 'pipe', 'inherit'] }))
    const exits = children.map((child) => once(child, 'exit'))
    let running = true
    void Promise.all(exits).then(() => (running = false))
    // Every full listing folds the journal into the compacted index: compactions race the writers' appends.
    let compactions = 0
    while (running) {
      await sessions.list()
      compactions++
    }
    for (const [code] of await Promise.all(exits)) expect(code).toBe(0)
    expect(compactions).toBeGreaterThan(1)

    // Every session's last entry (made at its close) is in the index: none is read from its log.
    reset()
    const { sessions: listed, total } = await sessions.recent({ limit: 100 })
    expect(total).toBe(50)
    expect(listed).toHaveLength(50)
    expect(listed.every((s) => s.records === 2 && !s.problem)).toBe(true)
    expect(streamed).toEqual([])
  })
})
