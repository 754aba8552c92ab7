import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { appsPerTest, readLines, tempDir } from './helpers.ts'

// Permissions do not stop root, so failures are provoked by taking the file away from its path.
const launch = appsPerTest()

async function sessionWithRecords(dir: string) {
  const app = await launch(dir)
  const session = await app.sessions.create({ cwd: dir })
  for (let i = 0; i < 3; i++) session.append('test/item', { i })
  await app.sessions.flush(session)
  return { ...app, session }
}

async function reopenElsewhere(dir: string, id: string) {
  const app = await launch(dir)
  return app.sessions.open(id, { readOnly: true })
}

describe('flush failure and recovery', () => {
  it('rejects while the directory is gone, then recreates the file without losing or duplicating records', async () => {
    const root = await tempDir()
    const dir = path.join(root, 'sessions')
    const { sessions, session } = await sessionWithRecords(dir)
    session.append('test/item', { i: 3 })
    await fs.rm(dir, { recursive: true })

    await expect(sessions.flush(session)).rejects.toMatchObject({ code: 'ENOENT', message: expect.stringContaining(session.id) })
    session.append('test/item', { i: 4 })
    await expect(sessions.flush(session)).rejects.toMatchObject({ code: 'ENOENT' })

    await fs.mkdir(dir)
    session.append('test/item', { i: 5 })
    await sessions.flush(session)
    expect(await readLines(session.file)).toEqual(session.records)
    expect(session.records.map((r) => r.seq)).toEqual([0, 1, 2, 3, 4, 5, 6])

    session.append('test/item', { i: 6 })
    await sessions.flush(session)
    expect((await reopenElsewhere(dir, session.id)).records).toEqual(session.records)
  })

  it('rejects while a directory stands in place of the file, then writes again once it is removed', async () => {
    const dir = await tempDir()
    const { sessions, session } = await sessionWithRecords(dir)
    const moved = `${session.file}.moved`
    await fs.rename(session.file, moved)
    await fs.mkdir(session.file)
    session.append('test/item', { i: 3 })

    const failure = await sessions.flush(session).then(() => undefined, (e: unknown) => e)
    expect(failure).toMatchObject({ message: expect.stringMatching(/replaced/) })
    expect(await fs.readdir(session.file)).toEqual([])
    await expect(sessions.close(session)).rejects.toThrow(/replaced/)
    expect(session.closed).toBe(false)

    await fs.rmdir(session.file)
    session.append('test/item', { i: 4 })
    await sessions.close(session)
    expect(await readLines(session.file)).toEqual(session.records)
    expect(session.records).toHaveLength(6)
    // Writes that reached the moved file before the replacement was noticed stay there, harmlessly.
    const stranded = await readLines(moved)
    expect(stranded).toEqual(session.records.slice(0, stranded.length))
  })

  it('notices at the next flush a file deleted after everything was durable', async () => {
    const dir = await tempDir()
    const { sessions, session } = await sessionWithRecords(dir)
    await fs.unlink(session.file)
    // The directory still exists, so the flush recreates the file from the durable bytes.
    await sessions.flush(session)
    expect(await readLines(session.file)).toEqual(session.records)
  })
})
