import os from 'node:os'
import { describe, expect, it } from 'vitest'
import { testDatabase, until } from '@goalkeeper/test-kit'
import { appsPerTest } from './helpers.ts'

const db = testDatabase()
const launch = appsPerTest()

const rows = async (id: string) => (await db.query('SELECT seq, line FROM goalkeeper_session_records WHERE session_id = $1 ORDER BY seq', [id])).rows
const lease = async (id: string) => (await db.query('SELECT holder, token, expires_at FROM goalkeeper_session_leases WHERE session_id = $1', [id])).rows[0]

describe('one writer per session through a lease row', () => {
  it('refuses a second writer with SESSION_LOCKED naming the holder, writes nothing for it, and lets readers read', async () => {
    const a = await launch(db.url)
    const session = await a.sessions.create({ cwd: '/work' })
    session.append('test/item', { by: 'a' })
    await a.sessions.flush(session)
    const b = await launch(db.url)
    const refused = b.sessions.open(session.id)
    await expect(refused).rejects.toMatchObject({
      code: 'SESSION_LOCKED',
      message: expect.stringMatching(new RegExp(`^session ${session.id} is open for writing by pid ${process.pid} on ${os.hostname()} \\(writer [0-9a-f]{6}\\) \\(lease renewed until \\d{4}-`)),
    })
    expect(await rows(session.id)).toHaveLength(2)
    const read = await b.sessions.open(session.id, { readOnly: true })
    expect(read.records.map((r) => r.data)).toEqual([expect.objectContaining({ id: session.id }), { by: 'a' }])
    // Closing gives the lease up: the next writer gets it at once.
    await a.sessions.close(session)
    expect(await lease(session.id)).toBeUndefined()
    const reopened = await b.sessions.open(session.id)
    expect(reopened.readOnly).toBe(false)
  })

  it('renews the lease in the background while the writer lives', async () => {
    const a = await launch(db.url, { leaseMs: 300 })
    const session = await a.sessions.create({ cwd: '/work' })
    const first = (await lease(session.id)).expires_at.getTime()
    await until(async () => (await lease(session.id)).expires_at.getTime() > first + 200, 'a renewal')
    const b = await launch(db.url)
    await expect(b.sessions.open(session.id)).rejects.toMatchObject({ code: 'SESSION_LOCKED' })
  })

  it('a writer that stops renewing loses the session: the lease expires, another takes it, and the old writer gets SESSION_LOST and writes nothing', async () => {
    // renewMs far beyond leaseMs stands for a holder that hangs (a stopped VM, a long GC pause, a cut network).
    const stalled = await launch(db.url, { leaseMs: 200 })
    const store = (stalled.sessions as unknown as { store: { renewMs: number } }).store
    store.renewMs = 3_600_000
    const old = await stalled.sessions.create({ cwd: '/work' })
    old.append('test/item', { by: 'old', n: 1 })
    await stalled.sessions.flush(old)

    const next = await launch(db.url)
    let taken: Awaited<ReturnType<typeof next.sessions.open>> | undefined
    await until(async () => {
      taken = await next.sessions.open(old.id).catch((error) => {
        if (error.code !== 'SESSION_LOCKED') throw error
        return undefined
      })
      return !!taken
    }, 'the stalled lease to expire')
    taken!.append('test/item', { by: 'next' })
    await next.sessions.flush(taken!)

    // Fencing: the old writer comes back and writes; every write checks the lease first.
    old.append('test/item', { by: 'old', n: 2 })
    await expect(stalled.sessions.flush(old)).rejects.toMatchObject({ code: 'SESSION_LOST', reason: 'taken', savedThrough: 1, unsaved: 1 })
    const lines = (await rows(old.id)).map((row) => JSON.parse(row.line))
    expect(lines.map((l) => l.data.by ?? 'header')).toEqual(['header', 'old', 'next'])
    expect(lines.map((l) => l.seq)).toEqual([0, 1, 2])
    // Its close releases nothing of the new holder's.
    await expect(stalled.sessions.close(old)).rejects.toMatchObject({ code: 'SESSION_LOST' })
    expect((await lease(old.id)).token).toBeDefined()
    await expect(launch(db.url).then((c) => c.sessions.open(old.id))).rejects.toMatchObject({ code: 'SESSION_LOCKED' })
  })

  it('of many writers racing for one session, exactly one gets it', async () => {
    const owner = await launch(db.url)
    const session = await owner.sessions.create({ cwd: '/work' })
    await owner.sessions.close(session)
    const apps = await Promise.all(Array.from({ length: 6 }, () => launch(db.url)))
    const results = await Promise.allSettled(apps.map((app) => app.sessions.open(session.id)))
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
    expect(results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason.code)).toEqual(Array(5).fill('SESSION_LOCKED'))
  })

  it('create refuses an id that exists, and remove (discard) refuses a session someone writes', async () => {
    const a = await launch(db.url)
    const session = await a.sessions.create({ cwd: '/work', id: 'fixed-id' })
    const b = await launch(db.url)
    await expect(b.sessions.create({ cwd: '/work', id: 'fixed-id' })).rejects.toMatchObject({ code: 'SESSION_EXISTS' })
    const otherStore = (b.sessions as unknown as { store: { remove(id: string): Promise<void> } }).store
    await expect(otherStore.remove('fixed-id')).rejects.toMatchObject({ code: 'SESSION_LOCKED' })
    expect((await db.query(`SELECT count(*)::int AS n FROM goalkeeper_sessions WHERE id = 'fixed-id'`)).rows[0].n).toBe(1)
    await a.sessions.discard(session)
    expect((await db.query(`SELECT count(*)::int AS n FROM goalkeeper_sessions WHERE id = 'fixed-id'`)).rows[0].n).toBe(0)
    expect(await lease('fixed-id')).toBeUndefined()
  })
})
