import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { logFiles } from '@goalkeeper/test-kit'
import { appsPerTest, databaseFor, logSize, readLines, STORE, tempDir } from './helpers.ts'

const launch = appsPerTest()
const LIMIT = 1 << 16
const text = 'x'.repeat(1000)

describe('size limits of a session log', () => {
  it('a live log stops at maxSessionBytes: one session/full record says so, later records stay in memory and every flush fails', async () => {
    const dir = await tempDir()
    const { sessions } = await launch(dir, { maxSessionBytes: LIMIT })
    const session = await sessions.create({ cwd: dir })
    let appended = 0
    while ((await logSize(session.file)) < LIMIT) {
      session.append('test/item', { i: appended++, text })
      await sessions.flush(session)
    }
    const size = await logSize(session.file)
    session.append('test/item', { i: appended, text })
    await expect(sessions.flush(session)).rejects.toMatchObject({
      code: 'SESSION_FULL',
      unsaved: 1,
      message: expect.stringContaining(`session ${session.id} reached its size limit of 0.1 MiB (maxSessionBytes of the session plugin)`),
    })
    // In memory the session goes on; on disk it ends with the reason, and nothing after it.
    expect(session.records.at(-1)).toMatchObject({ type: 'test/item', data: { i: appended } })
    const lines = await readLines(session.file)
    expect(lines.at(-1)).toMatchObject({ type: 'session/full', data: { maxBytes: LIMIT, bytes: size } })
    expect(lines.filter((line) => line.type === 'test/item')).toHaveLength(appended)
    session.append('test/item', { i: appended + 1 })
    await expect(sessions.flush(session)).rejects.toMatchObject({ code: 'SESSION_FULL', unsaved: 2 })
    expect(await readLines(session.file)).toHaveLength(lines.length)
    await expect(sessions.close(session)).rejects.toMatchObject({ code: 'SESSION_FULL' })
    // What was saved opens again in another process's service, the reason last.
    const other = await launch(dir, { maxSessionBytes: LIMIT })
    const reopened = await other.sessions.open(session.id, { readOnly: true })
    expect(reopened.records.at(-1)?.type).toBe('session/full')
    expect(reopened.records).toHaveLength(lines.length)
  })

  it('a log over maxOpenBytes is refused at open with its size, before it is read', async () => {
    const dir = await tempDir()
    const writer = await launch(path.join(dir, 'sessions'))
    const session = await writer.sessions.create({ cwd: dir })
    for (let i = 0; i < 80; i++) session.append('test/item', { i, text })
    await writer.sessions.close(session)
    await writer.fiber.dispose()

    const { sessions } = await launch(path.join(dir, 'sessions'), { maxOpenBytes: LIMIT })
    const size = await logSize(session.file)
    const message = `session ${session.id} is ${Math.round((size / 2 ** 20) * 10) / 10} MiB, more than the 0.1 MiB a session may have to be opened (maxOpenBytes of the session plugin): its records are held in memory once open, so raise maxOpenBytes only on a machine with several times that much memory (and node --max-old-space-size to match), or start a new session; goalkeeper show reads it whole as it streams, and fork copies it from its last checkpoint, whatever its size`
    await expect(sessions.open(session.id)).rejects.toMatchObject({ code: 'SESSION_TOO_LARGE', message })
    await expect(sessions.open(session.id, { readOnly: true })).rejects.toMatchObject({ code: 'SESSION_TOO_LARGE' })
    // Refused without taking the writer lock or writing a byte.
    expect(await logSize(session.file)).toBe(size)
    if (STORE === 'postgres') {
      const { rows } = await (await databaseFor(path.join(dir, 'sessions'))).query('SELECT count(*)::int AS n FROM goalkeeper_session_leases')
      expect(rows[0].n).toBe(0)
      return
    }
    expect(await logFiles(path.join(dir, 'sessions'))).toEqual([path.basename(session.file), `${path.basename(session.file)}.seal`])
  })
})
