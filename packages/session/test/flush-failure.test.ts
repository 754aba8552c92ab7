import { spawn } from 'node:child_process'
import { once } from 'node:events'
import fs from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { logFiles, nodeArgs } from '@goalkeeper/test-kit'
import { appsPerTest, readLines, tempDir, TEST_KEY } from './helpers.ts'
import { loadKey } from '../src/integrity.ts'

const here = path.dirname(fileURLToPath(import.meta.url))
const repo = path.resolve(here, '../../..')
const launch = appsPerTest()

async function sessionWithRecords(dir: string) {
  const app = await launch(dir)
  const session = await app.sessions.create({ cwd: dir })
  for (let i = 0; i < 3; i++) session.append('test/item', { i })
  await app.sessions.flush(session)
  return { ...app, session }
}

describe('a log taken away while open: writing stops and says so', () => {
  it('the directory removed: every flush rejects with SESSION_LOST, nothing is recreated', async () => {
    const root = await tempDir()
    const dir = path.join(root, 'sessions')
    const { sessions, session } = await sessionWithRecords(dir)
    session.append('test/item', { i: 3 })
    // Retried: the listing's entry of the first flush may be being written into the directory meanwhile.
    await fs.rm(dir, { recursive: true, maxRetries: 5 })

    await expect(sessions.flush(session)).rejects.toMatchObject({
      code: 'SESSION_LOST', reason: 'removed', unsaved: 1, savedThrough: 3,
      message: `cannot save session ${session.id}: ${session.file} was removed (the file or its directory) while the session was open; it is no longer written; 1 record not saved, records 0..3 were saved before it was removed`,
    })
    await fs.mkdir(dir)
    session.append('test/item', { i: 4 })
    await expect(sessions.flush(session)).rejects.toMatchObject({ code: 'SESSION_LOST', unsaved: 2 })
    expect(await logFiles(dir)).toEqual([])
    // Closing releases what is left and still reports it.
    await expect(sessions.close(session)).rejects.toMatchObject({ code: 'SESSION_LOST' })
    expect(session.closed).toBe(true)
  })

  it('the file replaced by another: rejects and never writes to either', async () => {
    const dir = await tempDir()
    const { sessions, session } = await sessionWithRecords(dir)
    const before = await fs.readFile(session.file)
    const moved = `${session.file}.moved`
    await fs.rename(session.file, moved)
    await fs.writeFile(session.file, 'forged\n')
    session.append('test/item', { i: 3 })

    await expect(sessions.flush(session)).rejects.toMatchObject({ code: 'SESSION_LOST', reason: 'replaced', message: expect.stringContaining(`records 0..3 are saved in ${session.file}`) })
    session.append('test/item', { i: 4 })
    await expect(sessions.flush(session)).rejects.toMatchObject({ code: 'SESSION_LOST' })
    expect(await fs.readFile(session.file, 'utf8')).toBe('forged\n')
    // At most the batch written before the flush noticed reached the moved file, never after.
    const stranded = await readLines(moved)
    expect(stranded.slice(0, 4)).toEqual(JSON.parse(JSON.stringify(session.records.slice(0, 4))))
    expect(stranded.length).toBeLessThanOrEqual(5)
    expect(before.length).toBeGreaterThan(0)
  })

  it('the file deleted after everything was durable: noticed at the next flush', async () => {
    const dir = await tempDir()
    const { sessions, session } = await sessionWithRecords(dir)
    await fs.unlink(session.file)
    await expect(sessions.flush(session)).rejects.toMatchObject({ code: 'SESSION_LOST', reason: 'removed', unsaved: 0 })
    await expect(fs.stat(session.file)).rejects.toMatchObject({ code: 'ENOENT' })
  })

  it('no byte can be written before the session exists (ulimit -f 0): create fails and leaves no temp file behind', async () => {
    const dir = await tempDir()
    await loadKey(TEST_KEY)
    const child = spawn('/bin/sh', ['-c', 'ulimit -f 0 && exec "$0" "$@"', process.execPath, ...nodeArgs(path.join(here, 'fixtures/fsize-child.ts')), dir, TEST_KEY, 'create'], { cwd: repo, stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout!.on('data', (chunk) => (out += chunk))
    const [code] = await once(child, 'exit')
    expect(code).toBe(0)
    expect(JSON.parse(out)).toEqual({ code: 'EFBIG' })
    expect(await logFiles(dir)).toEqual([])
  })

  it('a file size limit (ulimit -f in a child shell): the flush rejects with EFBIG and what is saved stays intact', async () => {
    const dir = await tempDir()
    const child = spawn('/bin/sh', ['-c', 'ulimit -f 32 && exec "$0" "$@"', process.execPath, ...nodeArgs(path.join(here, 'fixtures/fsize-child.ts')), dir, TEST_KEY], { cwd: repo, stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout!.on('data', (chunk) => (out += chunk))
    const [code] = await once(child, 'exit')
    expect(code).toBe(0)
    const report = JSON.parse(out)
    expect(report).toMatchObject({ code: 'EFBIG', unsaved: 1, savedThrough: 1 })
    expect(report.message).toMatch(/^cannot save session \S+: EFBIG: file too large, write; 1 record not saved, records 0\.\.1 are saved in /)
    // The partial write past the limit is a torn tail that the next writer cuts off.
    const app = await launch(dir)
    const session = await app.sessions.open(report.id)
    expect(session.records.map((r) => r.seq)).toEqual([0, 1])
    expect(session.repair?.tornBytes).toBeGreaterThan(0)
  })
})
