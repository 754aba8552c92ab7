// `ctx.sessions.recent` on PostgreSQL: the store's newest rows in one query (`newest`), each checked against
// its log as the file index's rows are, and the summaries the writers keep in the database.
import { describe, expect, it, onTestFinished } from 'vitest'
import { countCalls, createTestDatabase, expectTamperedFlaggedAndRewrittenFirst, type MarkRecord, type OwnedDatabase, writeClosedSessions } from '@goalkeeper/test-kit'
import { openPostgresStore, type PostgresSessionStore } from '../src/index.ts'
import { appsPerTest } from './helpers.ts'

/** This file's record: a type of its own, `x`, holding what a test edits by hand (`"i":4`). */
const mark: MarkRecord = (session, data) => {
  session.append<string>('x', data)
}

const launch = appsPerTest()

async function database(): Promise<OwnedDatabase> {
  const db = await createTestDatabase()
  onTestFinished(() => db.drop())
  return db
}

/** A store counting what `recent` does: the logs it streams, the versions it asks one by one, its queries of the newest. */
async function countingStore(url: string) {
  const store: PostgresSessionStore = await openPostgresStore(url)
  onTestFinished(() => store.close())
  const { calls: { stream: streamed, version: versions, newest }, reset } = countCalls(store, ['stream', 'version', 'newest'])
  return { store, streamed, versions, newest, reset }
}

/** `count` closed sessions, the later ones more recent; their ids, newest first. */
async function sessionsIn(url: string, count: number): Promise<string[]> {
  let now = 1_000_000
  const app = await launch(url, { clock: () => (now += 1000) })
  const ids = await writeClosedSessions(app.sessions, count, { cwd: '/work', mark })
  await app.fiber.dispose()
  return ids.reverse()
}

describe('the most recent sessions on PostgreSQL', () => {
  it('come from one query of the newest rows, with the summaries their writers kept: no log is read', async () => {
    const db = await database()
    const ids = await sessionsIn(db.url, 12)
    const { store, streamed, versions, newest, reset } = await countingStore(db.url)
    const { sessions } = await launch(db.url, { store })

    const first = await sessions.recent({ limit: 3 })
    expect(first.sessions.map((s) => s.id)).toEqual(ids.slice(0, 3))
    expect(first.total).toBe(12)
    expect(first.sessions[0]).toMatchObject({ records: 2, cwd: '/work' })
    expect(newest).toEqual([3])
    expect(streamed).toEqual([])
    expect(versions).toEqual([])
    reset()
    expect(await sessions.recent({ limit: 3 })).toEqual(first)
    expect(newest).toEqual([3])
    // The whole listing agrees with it.
    expect((await sessions.list()).map((s) => s.id)).toEqual(ids)
  })

  it('flags a log edited by hand when it shows it, reading that log only; one written again moves up; one removed is not counted', async () => {
    const db = await database()
    const ids = await sessionsIn(db.url, 6)
    const { store, streamed, reset } = await countingStore(db.url)
    const { sessions } = await launch(db.url, { store })

    await db.query(`UPDATE goalkeeper_session_records SET line = replace(line, '"i":4', '"i":7') WHERE session_id = $1 AND seq = 1`, [ids[1]])
    await expectTamperedFlaggedAndRewrittenFirst(sessions, ids, { streamed, reset, mark })

    await store.remove(ids[0])
    expect((await sessions.recent({ limit: 10 })).total).toBe(5)
  })

  it('moves a row whose activity time was edited to look newer down to where its summary puts it, asking for more rows', async () => {
    const db = await database()
    const ids = await sessionsIn(db.url, 5)
    const { store, newest, reset } = await countingStore(db.url)
    const { sessions } = await launch(db.url, { store })
    // The row says the oldest session is the newest; its signed summary says otherwise.
    await db.query('UPDATE goalkeeper_sessions SET updated_at = updated_at + 1000000 WHERE id = $1', [ids[4]])
    reset()
    const { sessions: listed, total } = await sessions.recent({ limit: 2 })
    expect(listed.map((s) => s.id)).toEqual(ids.slice(0, 2))
    expect(total).toBe(5)
    expect(newest).toEqual([2, 8])
    expect((await sessions.recent({ limit: 5 })).sessions.map((s) => s.id)).toEqual(ids)
  })

  it('shows a session open in this process as its records in memory say, once', async () => {
    const db = await database()
    const ids = await sessionsIn(db.url, 3)
    const { store } = await countingStore(db.url)
    const { sessions } = await launch(db.url, { store, flushDelayMs: 60_000 })
    const open = await sessions.open(ids[2])
    open.append('x', { unflushed: true })
    const { sessions: listed, total } = await sessions.recent({ limit: 3 })
    expect(listed.map((s) => s.id)).toEqual([ids[2], ids[0], ids[1]])
    expect(listed[0].records).toBe(3)
    expect(total).toBe(3)
    await sessions.close(open)
  })
})
