import { describe, expect, it, onTestFinished } from 'vitest'
import { testDatabase } from '@goalkeeper/test-kit'
import type { LogChunk } from '@goalkeeper/session'
import { openPostgresStore } from '../src/index.ts'
import { appsPerTest } from './helpers.ts'

const db = testDatabase()
const launch = appsPerTest()

async function store() {
  const opened = await openPostgresStore(db.url)
  onTestFinished(() => opened.close())
  return opened
}

async function text(chunks: AsyncIterable<Buffer>): Promise<{ text: string; chunks: number }> {
  const parts: Buffer[] = []
  for await (const chunk of chunks) parts.push(chunk)
  return { text: Buffer.concat(parts).toString('utf8'), chunks: parts.length }
}

describe('the PostgreSQL store as the service sees it', () => {
  it('streams the log a page of rows at a time, and any byte range of it exactly, multi-byte characters included', async () => {
    const app = await launch(db.url)
    const session = await app.sessions.create({ cwd: '/work' })
    for (let i = 0; i < 4500; i++) session.append('note', { i, text: i % 7 ? 'plain' : 'é€𝄞' })
    await app.sessions.close(session)
    const pg = await store()
    const { rows } = await db.query('SELECT line FROM goalkeeper_session_records WHERE session_id = $1 ORDER BY seq', [session.id])
    const whole = Buffer.from(rows.map((row) => `${row.line}\n`).join(''))

    const all = await text(pg.stream(session.id))
    expect(all.text).toBe(whole.toString('utf8'))
    // 4,501 rows: a short first page (what a reader of the header alone reads), then pages of 2,000 rows,
    // never one buffer of the whole log.
    expect(all.chunks).toBe(4)
    expect((await pg.version(session.id)).size).toBe(whole.length)
    for (const [start, end] of [[0, 1], [5, 500], [1000, 1001], [whole.length - 3, whole.length], [123_456, 345_678], [whole.length, whole.length + 10]]) {
      const parts: Buffer[] = []
      for await (const chunk of pg.stream(session.id, { start, end })) parts.push(chunk)
      expect(Buffer.concat(parts).equals(whole.subarray(start, end))).toBe(true)
    }
    await expect(text(pg.stream('nope'))).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' })
    await expect(pg.version('nope')).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' })
  })

  it('hands replay the rows of a page as lines, the text of the bytes, and the pages a range cuts as bytes', async () => {
    const app = await launch(db.url)
    const session = await app.sessions.create({ cwd: '/work' })
    for (let i = 0; i < 4500; i++) session.append('note', { i, text: i % 7 ? 'plain' : 'é€𝄞' })
    await app.sessions.close(session)
    const pg = await store()
    const whole = Buffer.from((await text(pg.stream(session.id))).text)
    const read = async (range?: { start?: number; end?: number }) => {
      const parts: LogChunk[] = []
      for await (const chunk of pg.lines(session.id, range)) parts.push(chunk)
      return { parts, bytes: Buffer.concat(parts.map((part) => (Buffer.isBuffer(part) ? part : Buffer.from(`${part.join('\n')}\n`)))) }
    }
    const all = await read()
    expect(all.parts.map((part) => (Buffer.isBuffer(part) ? 'bytes' : part.length))).toEqual([64, 2000, 2000, 437])
    expect(all.bytes.equals(whole)).toBe(true)
    const [start, end] = [123_456, 345_678]
    const cut = await read({ start, end })
    expect(Buffer.isBuffer(cut.parts[0]) && Buffer.isBuffer(cut.parts.at(-1))).toBe(true)
    expect(cut.bytes.equals(whole.subarray(start, end))).toBe(true)
  })

  it('reads a range that starts late (a log read from its checkpoint) from the row of its first byte on, not the rows before', async () => {
    const app = await launch(db.url)
    const session = await app.sessions.create({ cwd: '/work' })
    for (let i = 0; i < 4500; i++) session.append('note', { i })
    await app.sessions.close(session)
    const pg = await store()
    const { rows } = await db.query('SELECT byte_offset FROM goalkeeper_session_records WHERE session_id = $1 AND seq = 4200', [session.id])
    const start = Number(rows[0].byte_offset) + 5
    const whole = Buffer.from((await text(pg.stream(session.id))).text)
    const asked: unknown[][] = []
    const query = pg.pool.query.bind(pg.pool) as (...args: unknown[]) => Promise<unknown>
    ;(pg.pool as unknown as { query: typeof query }).query = (...args) => {
      const config = args[0] as { text?: string; values?: unknown[] }
      if (typeof config === 'object' && config.text?.includes('seq BETWEEN')) asked.push(config.values!)
      return query(...args)
    }
    const tail = await text(pg.stream(session.id, { start }))
    expect(Buffer.from(tail.text).equals(whole.subarray(start))).toBe(true)
    // One page, from seq 4200 (the row that holds the start byte): the 4,200 rows before it are not asked for.
    expect(asked.map((values) => values[1])).toEqual([4200])
  })

  it('the version token changes with every batch, cut and hand edit, and never repeats for a session of the same id', async () => {
    const pg = await store()
    const app = await launch(db.url)
    const session = await app.sessions.create({ cwd: '/work' })
    const seen = [await pg.version(session.id)]
    session.append('note', { n: 1 })
    await app.sessions.flush(session)
    seen.push(await pg.version(session.id))
    await app.sessions.close(session)
    // Same size, same seq count: only the row's version tells a hand edit.
    await db.query(`UPDATE goalkeeper_session_records SET line = replace(line, '"n":1', '"n":2') WHERE session_id = $1 AND seq = 1`, [session.id])
    seen.push(await pg.version(session.id))
    expect(seen[2].size).toBe(seen[1].size)
    await pg.remove(session.id)
    const again = await app.sessions.create({ cwd: '/work', id: session.id })
    seen.push(await pg.version(again.id))
    await app.sessions.close(again)
    expect(new Set(seen.map((version) => version.token)).size).toBe(seen.length)
  })

  it('listing keeps a signed summary per session in goalkeeper_session_summaries: a hand edit shows as tampered, a forged summary is rebuilt', async () => {
    const app = await launch(db.url)
    const ids: string[] = []
    for (let i = 0; i < 2; i++) {
      const session = await app.sessions.create({ cwd: '/work' })
      session.append('note', { n: i })
      await app.sessions.close(session)
      ids.push(session.id)
    }
    const [a, b] = ids
    const first = (await app.sessions.list()).filter((s) => ids.includes(s.id))
    expect(first.map((s) => s.records)).toEqual([2, 2])
    const kept = await db.query('SELECT session_id, summary FROM goalkeeper_session_summaries WHERE session_id = ANY($1) ORDER BY session_id', [ids])
    expect(kept.rows.map((row) => row.session_id)).toEqual([...ids].sort())

    await db.query(`UPDATE goalkeeper_session_records SET line = replace(line, '"n":0', '"n":7') WHERE session_id = $1 AND seq = 1`, [a])
    // A summary copied from b onto a row edited to claim more records: neither verifies.
    const ofB = kept.rows.find((row) => row.session_id === b)!.summary as string
    await db.query('UPDATE goalkeeper_session_summaries SET summary = $2 WHERE session_id = $1', [b, ofB.replace('"records":2', '"records":99')])
    const listed = await app.sessions.list()
    expect(listed.find((s) => s.id === a)?.problem).toMatchObject({ code: 'SESSION_TAMPERED', line: 2 })
    expect(listed.find((s) => s.id === b)).toMatchObject({ records: 2 })
    expect(listed.find((s) => s.id === b)?.problem).toBeUndefined()
  })
})
