import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { type Session, SessionError, type SessionRecord } from '@goalkeeper/session'
import { appsPerTest, databaseFor, human, LOG_VERSION, readLines, start, STORE, tempDir } from './helpers.ts'

const launch = appsPerTest()

describe('append, flush and reopen', () => {
  it('reopens a flushed session with identical records', async () => {
    const dir = await tempDir()
    const { sessions, fiber } = await launch(dir)
    const session = await sessions.create({ cwd: dir })
    session.append('input/queued', { message: human('m1', 'multi\nline "quoted" \u2028 ünïcødé 😀') })
    session.append('turn/start', { turn: 1 })
    session.append('plugin/custom', { nested: { list: [1, null, 'x'], flag: true }, n: 1.5 })
    session.append('turn/end', { turn: 1, outcome: { kind: 'completed' } })
    await sessions.flush(session)
    const before = structuredClone(session.records)
    await fiber.dispose()

    const other = await launch(dir)
    const reopened = await other.sessions.open(session.id)
    expect(reopened.records).toEqual(before)
    // The header names the id of the key that signed it (never the key): a reader with another key says so.
    expect(reopened.header).toEqual({ version: LOG_VERSION, id: session.id, createdAt: before[0].at, cwd: dir, sealed: true, keyId: (await other.sessions.signingKey()).id })
    expect(reopened.header.keyId).toMatch(/^[0-9a-f]{16}$/)
    expect(reopened.repair).toBeUndefined()
    expect(await readLines(session.file)).toEqual(before)
  })

  it('writes many appends with one flush, in order, with contiguous seqs', async () => {
    const dir = await tempDir()
    const { root, sessions } = await launch(dir)
    const session = await sessions.create({ cwd: dir })
    const flushed: Session[] = []
    root.on('session/flush', (s) => void flushed.push(s))
    for (let i = 0; i < 5000; i++) session.append('test/item', { i, text: 'x'.repeat(i % 50) })
    await sessions.flush(session)
    const lines = await readLines(session.file)
    expect(lines).toHaveLength(5001)
    expect(lines.map((r) => r.seq)).toEqual([...Array(5001).keys()])
    expect(lines[4321].data).toEqual({ i: 4320, text: 'x'.repeat(4320 % 50) })
    expect(flushed).toEqual([session])
  })

  it('returns the record as stored: seq, clamped at, and a copy of the data', async () => {
    const dir = await tempDir()
    const { sessions } = await launch(dir)
    const session = await sessions.create({ cwd: dir })
    const data = { items: ['a'], missing: undefined as unknown }
    const record = session.append('test/item', data)
    data.items.push('b')
    expect(record).toEqual({ seq: 1, at: expect.any(Number), type: 'test/item', data: { items: ['a'] } })
    expect(session.records[1]).toBe(record)
    expect(session.records[0]).toMatchObject({ seq: 0, type: 'session/header' })
  })

  it('keeps at monotonic when the clock goes backwards', async () => {
    const dir = await tempDir()
    const times = [5000, 6000, 4000, 3000, 7000, 100]
    const clock = () => times.shift() ?? 50
    const { sessions } = await launch(dir, { clock })
    const session = await sessions.create({ cwd: dir })
    for (let i = 0; i < 5; i++) session.append('tick', { i })
    expect(session.records.map((r) => r.at)).toEqual([6000, 6000, 6000, 7000, 7000, 7000])
    await sessions.flush(session)
    expect((await readLines(session.file)).map((r) => r.at)).toEqual([6000, 6000, 6000, 7000, 7000, 7000])
  })

  it('keeps at monotonic across a reopen whose clock is behind the file', async () => {
    const dir = await tempDir()
    const ahead = await launch(dir, { clock: () => 9000 })
    const session = await ahead.sessions.create({ cwd: dir })
    session.append('turn/start', { turn: 1 })
    await ahead.sessions.close(session)

    const behind = await launch(dir, { clock: () => 1000 })
    const reopened = await behind.sessions.open(session.id)
    // The repair record (turn/end interrupted) and later appends continue from the file's largest at.
    reopened.append('tick', {})
    await behind.sessions.flush(reopened)
    expect((await readLines(reopened.file)).map((r) => [r.type, r.at])).toEqual([
      ['session/header', 9000], ['turn/start', 9000], ['turn/end', 9000], ['tick', 9000],
    ])
  })

  it('rejects bad input with a clear error and consumes no seq', async () => {
    const dir = await tempDir()
    const { sessions } = await launch(dir)
    const session = await sessions.create({ cwd: dir })
    const circular: any = {}
    circular.self = circular
    expect(() => session.append('x', circular)).toThrow(TypeError)
    expect(() => session.append('x', { n: 1n })).toThrow(/not JSON-serialisable/)
    expect(() => session.append('x', undefined)).toThrow(/not JSON-serialisable/)
    expect(() => session.append('', {})).toThrow(/non-empty string/)
    expect(() => session.append<string>('session/header', {})).toThrow(/written by create/)
    expect(session.append('ok', {}).seq).toBe(1)
    await expect(sessions.open('../escape')).rejects.toThrow(/invalid session id/)
    await expect(sessions.create({ cwd: '' })).rejects.toThrow(/cwd/)
    await expect(sessions.open('20000101-000000-nothere')).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' })
  })
})

describe('events', () => {
  it('a throwing session/event listener does not break the append, and is logged', async () => {
    const dir = await tempDir()
    const { root, sessions, logs } = await launch(dir)
    const session = await sessions.create({ cwd: dir })
    const seen: number[] = []
    root.on('session/event', () => {
      throw new Error('sync listener failure')
    })
    root.on('session/event', async () => {
      throw new Error('async listener failure')
    })
    root.on('session/event', (_session, record) => void seen.push(record.seq))
    const record = session.append('test/item', { ok: true })
    expect(record.seq).toBe(1)
    expect(seen).toEqual([1])
    await sessions.flush(session)
    expect(await readLines(session.file)).toHaveLength(2)
    const errors = logs.filter((l) => l.type === 'error').map((l) => l.text).join('\n')
    expect(errors).toContain('sync listener failure')
    expect(errors).toContain('async listener failure')
  })

  it('a throwing session/flush listener is logged and the flush still resolves', async () => {
    const dir = await tempDir()
    const { root, sessions, waitLog } = await launch(dir)
    const session = await sessions.create({ cwd: dir })
    root.on('session/flush', async () => {
      throw new Error('flush listener failure')
    })
    session.append('test/item', {})
    await sessions.flush(session)
    const logged = await waitLog((l) => l.text.includes('flush listener failure'))
    expect(logged).toMatchObject({ type: 'error', name: 'session' })
  })
})

describe('lifecycle', () => {
  it('returns the same object for an id that is already open, even for concurrent opens', async () => {
    const dir = await tempDir()
    const { sessions } = await launch(dir)
    const created = await sessions.create({ cwd: dir })
    expect(await sessions.open(created.id)).toBe(created)
    expect(await sessions.open(created.id, { readOnly: true })).toBe(created)
    expect(sessions.get(created.id)).toBe(created)
    await sessions.close(created)

    const [a, b] = await Promise.all([sessions.open(created.id), sessions.open(created.id)])
    expect(a).toBe(b)
    expect(a).not.toBe(created)
  })

  it('turns a read-only session writable in place when opened for writing', async () => {
    const dir = await tempDir()
    const { sessions } = await launch(dir)
    const created = await sessions.create({ cwd: dir })
    await sessions.close(created)
    const view = await sessions.open(created.id, { readOnly: true })
    expect(view.readOnly).toBe(true)
    expect(() => view.append('x', {})).toThrow(expect.objectContaining({ code: 'SESSION_READ_ONLY' }))
    const writable = await sessions.open(created.id)
    expect(writable).toBe(view)
    expect(writable.readOnly).toBe(false)
    expect(writable.append('x', {}).seq).toBe(1)
  })

  it('close flushes, releases the session and refuses later appends', async () => {
    const dir = await tempDir()
    const { sessions } = await launch(dir)
    const session = await sessions.create({ cwd: dir })
    session.append('test/item', { n: 1 })
    await sessions.close(session)
    expect(session.closed).toBe(true)
    expect(sessions.get(session.id)).toBeUndefined()
    expect(await readLines(session.file)).toHaveLength(2)
    let error: unknown
    try {
      session.append('test/item', { n: 2 })
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(SessionError)
    expect(error).toMatchObject({ code: 'SESSION_CLOSED' })
    await sessions.flush(session)
  })

  it('plugin dispose flushes and closes every open session', async () => {
    const dir = await tempDir()
    const { sessions, fiber } = await start(dir, { flushDelayMs: 60_000 })
    const a = await sessions.create({ cwd: dir })
    const b = await sessions.create({ cwd: dir })
    for (let i = 0; i < 10; i++) a.append('test/item', { i })
    b.append('test/item', { b: true })
    expect(await readLines(a.file)).toHaveLength(1)
    await fiber.dispose()
    expect(a.closed && b.closed).toBe(true)
    expect(await readLines(a.file)).toEqual(a.records)
    expect(await readLines(b.file)).toEqual(b.records)
  })

  it('generates sortable unique ids and refuses an existing explicit id', async () => {
    const dir = await tempDir()
    let now = Date.UTC(2024, 0, 2, 3, 4, 5)
    const { sessions } = await launch(dir, { clock: () => now })
    const first = await sessions.create({ cwd: dir })
    now += 1000
    const ids = [first.id]
    for (let i = 0; i < 20; i++) ids.push((await sessions.create({ cwd: dir })).id)
    expect(first.id).toMatch(/^20240102-030405-[0-9a-z]{6}$/)
    expect(new Set(ids).size).toBe(21)
    expect([...ids].sort()[0]).toBe(first.id)
    await sessions.create({ cwd: dir, id: 'fixed-id' })
    await expect(sessions.create({ cwd: dir, id: 'fixed-id' })).rejects.toMatchObject({ code: 'SESSION_EXISTS' })
    // Each open session holds its writer lock (a lock file, or a lease row); nothing else (no temp file) is left.
    if (STORE === 'postgres') {
      const { rows } = await (await databaseFor(dir)).query('SELECT count(*)::int AS n FROM goalkeeper_session_leases')
      expect(rows[0].n).toBe(22)
      return
    }
    const names = await fs.readdir(dir)
    expect(names.filter((f) => f.endsWith('.jsonl.lock'))).toHaveLength(22)
    expect(names.filter((f) => f.endsWith('.jsonl.seal'))).toHaveLength(22)
    expect(names.filter((f) => !f.endsWith('.jsonl') && !f.endsWith('.jsonl.lock') && !f.endsWith('.jsonl.seal'))).toEqual([])
  })

  it('records the parent given to create, and resolves the cwd', async () => {
    const dir = await tempDir()
    const { sessions } = await launch(dir)
    const session = await sessions.create({ cwd: path.join(dir, 'a', '..', 'b'), parent: { id: 'p', seq: 3 } })
    expect(session.header).toMatchObject({ cwd: path.join(dir, 'b'), parent: { id: 'p', seq: 3 } })
    const records: readonly SessionRecord[] = (await readLines(session.file)) as SessionRecord[]
    expect(records).toEqual(session.records)
  })
})
