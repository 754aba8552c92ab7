import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import type { SessionService } from '@goalkeeper/session'
import { JsonlFileStore } from '@goalkeeper/session-jsonl'
import { appsPerTest, tempDir } from '../../session/test/helpers.ts'

const launch = appsPerTest()
const SEGMENT = 4096

async function written(sessions: SessionService, dir: string, items: number, every = 20): Promise<{ id: string; file: string }> {
  const session = await sessions.create({ cwd: dir })
  for (let i = 1; i <= items; i++) {
    session.append('test/item', { i, text: 'x'.repeat(40) })
    if (i % every === 0) {
      sessions.checkpoint(session, 'interval')
      await sessions.flush(session)
    }
  }
  await sessions.close(session)
  return { id: session.id, file: session.file }
}

describe('a snapshot of a small log', () => {
  it('gives the token version gives, the bytes and the seal as read apart, and changes with a write', async () => {
    const dir = await tempDir()
    const { sessions } = await launch(dir)
    const { id, file } = await written(sessions, dir, 10)
    const store = new JsonlFileStore(dir)
    const snapshot = (await store.snapshot(id, 1 << 20))!
    expect(snapshot.token).toBe((await store.version(id)).token)
    expect(snapshot.size).toBe((await fs.stat(file)).size)
    expect(snapshot.bytes.equals(await fs.readFile(file))).toBe(true)
    expect(snapshot.seal).toBe(await store.readSeal(id))
    const session = await sessions.open(id)
    session.append('test/item', { more: true })
    await sessions.close(session)
    const after = (await store.snapshot(id, 1 << 20))!
    expect(after.token).not.toBe(snapshot.token)
    expect(after.token).toBe((await store.version(id)).token)
    expect(after.seal).not.toBe(snapshot.seal)
  })

  it('declines a log over the size asked for, one kept in segments and one whose rollover is under way', async () => {
    const dir = await tempDir()
    const { sessions } = await launch(dir, { segmentBytes: SEGMENT })
    const small = await written(sessions, dir, 10)
    const segmented = await written(sessions, dir, 200)
    const store = new JsonlFileStore(dir, { segmentBytes: SEGMENT })
    expect(await store.snapshot(small.id, (await fs.stat(small.file)).size - 1)).toBeUndefined()
    expect(await store.snapshot(small.id, (await fs.stat(small.file)).size)).toBeDefined()
    await expect(fs.stat(`${segmented.file}.000001`)).resolves.toBeDefined()
    expect(await store.snapshot(segmented.id, 1 << 20)).toBeUndefined()
    // A rollover's link made, nothing else yet: the live file is also the first segment.
    await fs.link(small.file, `${small.file}.000001`)
    expect(await store.snapshot(small.id, 1 << 20)).toBeUndefined()
  })

  it('never follows a link: a linked log is corrupt, a linked seal never verifies; a missing log is not found', async () => {
    const dir = await tempDir()
    const { sessions } = await launch(dir)
    const { id, file } = await written(sessions, dir, 3)
    const store = new JsonlFileStore(dir)
    await fs.rename(`${file}.seal`, path.join(dir, 'elsewhere'))
    await fs.symlink(path.join(dir, 'elsewhere'), `${file}.seal`)
    expect((await store.snapshot(id, 1 << 20))!.seal).toBe(await store.readSeal(id))
    expect(await store.readSeal(id)).toBe('not a regular file')
    await fs.rename(file, path.join(dir, 'log-elsewhere'))
    await fs.symlink(path.join(dir, 'log-elsewhere'), file)
    await expect(store.snapshot(id, 1 << 20)).rejects.toMatchObject({ code: 'SESSION_CORRUPT' })
    await expect(store.snapshot('20260101-000000-nothere', 1 << 20)).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' })
  })

  it('a first listing from snapshots says what one from the reads apart says: signed, edited by hand, cut, in segments', async () => {
    const dir = await tempDir()
    const { sessions } = await launch(dir, { segmentBytes: SEGMENT })
    const plain = await written(sessions, dir, 10)
    const edited = await written(sessions, dir, 10)
    const cut = await written(sessions, dir, 10)
    await written(sessions, dir, 200)
    const text = await fs.readFile(edited.file, 'utf8')
    await fs.writeFile(edited.file, text.replace('"i":3', '"i":4'))
    const lines = (await fs.readFile(cut.file, 'utf8')).trimEnd().split('\n')
    await fs.writeFile(cut.file, `${lines.slice(0, -2).join('\n')}\n`)
    const listed = async (snapshots: boolean) => {
      await fs.rm(path.join(dir, '.summaries.log'), { force: true })
      await fs.rm(path.join(dir, '.summaries'), { force: true })
      const store = new JsonlFileStore(dir, { segmentBytes: SEGMENT })
      let taken = 0
      const snapshot = store.snapshot.bind(store)
      if (snapshots) store.snapshot = async (id, maxBytes) => {
        const result = await snapshot(id, maxBytes)
        if (result) taken++
        return result
      }
      else (store as { snapshot?: unknown }).snapshot = undefined
      const app = await launch(dir, { store, segmentBytes: SEGMENT })
      return { list: await app.sessions.list(), taken }
    }
    const apart = await listed(false)
    const whole = await listed(true)
    expect(whole.taken).toBe(3)
    expect(whole.list).toEqual(apart.list)
    const problems = Object.fromEntries(whole.list.map((s) => [s.id, s.problem?.code]))
    expect(problems[plain.id]).toBeUndefined()
    expect(problems[edited.id]).toBe('SESSION_TAMPERED')
    expect(problems[cut.id]).toBe('SESSION_TRUNCATED')
    expect(whole.list).toHaveLength(4)
  })
})
