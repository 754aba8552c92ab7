import { spawn } from 'node:child_process'
import { once } from 'node:events'
import fs from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect } from 'vitest'
import { expectTamperedFlaggedAndRewrittenFirst, nodeArgs } from '@goalkeeper/test-kit'
import { appsPerTest, closedSessions, countingStore, itOnFiles, TEST_KEY, tempDir } from './helpers.ts'

const here = path.dirname(fileURLToPath(import.meta.url))
const repo = path.resolve(here, '../../..')
const launch = appsPerTest()

/** `count` closed sessions, the later ones more recent; their ids, newest first. */
async function sessionsIn(dir: string, count: number): Promise<string[]> {
  let now = 1_000_000
  return (await closedSessions(launch, dir, count, { clock: () => (now += 1000) })).reverse()
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
    await expectTamperedFlaggedAndRewrittenFirst(sessions, ids, { streamed, reset })
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
    // One more record in the table's first row: its mac no longer verifies.
    const text = good.toString('utf8')
    const row = text.indexOf('\n') + 1
    const updated = text.slice(row).split(' ')[1]
    await tamper(Buffer.from(text.slice(0, row) + text.slice(row).replace(updated, String(Number(updated) + 1))), 'does not verify')
    await tamper(good.subarray(0, 120), 'cut short')
    await tamper(Buffer.from('garbage\n'), 'not an index')

    // A forged journal line is not trusted either.
    await fs.appendFile(`${index}.log`, `${ids[3]} ${'0'.repeat(64)} {"id":"${ids[3]}"}\n`)
    reset()
    app.logs.length = 0
    expect((await sessions.recent({ limit: 2 })).sessions).toEqual(expected)
    expect(warned()).toEqual([expect.stringContaining('journal line 1 does not verify')])

    // Missing: built from the logs, nothing to report.
    await fs.rm(index)
    reset()
    app.logs.length = 0
    expect((await sessions.recent({ limit: 2 })).sessions).toEqual(expected)
    expect(streamed.sort()).toEqual([...ids].sort())
    expect(warned()).toEqual([])
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
