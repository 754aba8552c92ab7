import { format } from 'node:util'
import { describe, expect, it } from 'vitest'
import { pg, testDatabase } from '@goalkeeper/test-kit'
import { appsPerTest, BATCHED } from './helpers.ts'
import type { UserMessage } from '@goalkeeper/session'

const db = testDatabase()
const launch = appsPerTest()

const human = (text: string): { message: UserMessage } => ({ message: { id: 'm', content: [{ type: 'text', text }], source: { kind: 'human' } } })

async function written(url: string) {
  const app = await launch(url)
  const session = await app.sessions.create({ cwd: '/work' })
  session.append('input/queued', human('first'))
  session.append('turn/start', { turn: 1 })
  session.append('turn/end', { turn: 1, outcome: { kind: 'completed' } })
  await app.sessions.close(session)
  return session.id
}

describe('tamper evidence in the database', () => {
  it('a row edited in the database is named at open: never written, forked past, or replayed as trusted', async () => {
    const id = await written(db.url)
    await db.query(`UPDATE goalkeeper_session_records SET line = replace(line, 'first', 'rm -rf /') WHERE session_id = $1 AND seq = 1`, [id])
    const app = await launch(db.url)
    // Per batch, located to the batch of rows written together: seqs 1-3, lines 2-4.
    const found = BATCHED ? 'lines 2-4 (one batch) do not match their signature' : 'line does not match its signature'
    await expect(app.sessions.open(id)).rejects.toMatchObject({ code: 'SESSION_TAMPERED', line: 2, message: expect.stringContaining(`#${id}:2: ${found}`) })
    const view = await app.sessions.open(id, { readOnly: true })
    expect(view.integrity).toMatchObject({ state: 'tampered', line: 2 })
    await expect(app.sessions.fork(id, { uptoSeq: 2 })).rejects.toMatchObject({ code: 'SESSION_TAMPERED' })
  })

  it('a row inserted by someone without the key, or signed with another key, is detected', async () => {
    const id = await written(db.url)
    const forged = JSON.stringify({ seq: 4, at: 5, type: 'input/queued', data: human('forged') })
    await db.query(`INSERT INTO goalkeeper_session_records (session_id, seq, byte_offset, line) VALUES ($1, 4, 99999, $2)`, [id, forged])
    const app = await launch(db.url)
    await expect(app.sessions.open(id)).rejects.toMatchObject({ code: 'SESSION_TAMPERED', line: 5, message: expect.stringContaining('is not signed, yet lines before it are') })
    // A machine with another key sees every line as tampered from the first signed one.
    const other = await launch(db.url, { key: 'e5'.repeat(32) })
    await expect(other.sessions.open(await written(db.url))).rejects.toMatchObject({ code: 'SESSION_TAMPERED', line: 1 })
  })

  it('rows deleted or swapped in the database are tampering (not corruption), and rows cut off the end are named as a cut', async () => {
    const deleted = await written(db.url)
    await db.query('DELETE FROM goalkeeper_session_records WHERE session_id = $1 AND seq = 1', [deleted])
    const swapped = await written(db.url)
    await db.query(`UPDATE goalkeeper_session_records r SET line = o.line FROM goalkeeper_session_records o
      WHERE r.session_id = $1 AND o.session_id = $1 AND ((r.seq = 1 AND o.seq = 2) OR (r.seq = 2 AND o.seq = 1))`, [swapped])
    const cut = await written(db.url)
    await db.query('DELETE FROM goalkeeper_session_records WHERE session_id = $1 AND seq >= 2', [cut])
    const app = await launch(db.url)
    await expect(app.sessions.open(deleted)).rejects.toMatchObject({ code: 'SESSION_TAMPERED', line: 2, message: expect.stringContaining('has seq 2 where 1 was expected') })
    await expect(app.sessions.open(swapped)).rejects.toMatchObject({ code: 'SESSION_TAMPERED', line: 2 })
    // Per batch, the row left of the batch cut is not verified: the log ends before it.
    await expect(app.sessions.open(cut)).rejects.toMatchObject({ code: 'SESSION_TRUNCATED', message: expect.stringContaining(`the log ends at seq ${BATCHED ? 0 : 1}, but its seal says seq 3 was written`) })
    const problems = new Map((await app.sessions.list()).map((s) => [s.id, s.problem?.code]))
    expect([problems.get(deleted), problems.get(swapped), problems.get(cut)]).toEqual(['SESSION_TAMPERED', 'SESSION_TAMPERED', 'SESSION_TRUNCATED'])
  })

  it('a newline put inside a row splits it, as it splits a line of a file: the log is corrupt there', async () => {
    const id = await written(db.url)
    await db.query(`UPDATE goalkeeper_session_records SET line = replace(line, ',"at":', E',\n"at":') WHERE session_id = $1 AND seq = 2`, [id])
    const app = await launch(db.url)
    // Parsed whole, the row would still be JSON (a newline between its fields): it must not be read as one line.
    await expect(app.sessions.open(id, { readOnly: true })).rejects.toMatchObject({ code: 'SESSION_CORRUPT', line: 3, message: expect.stringContaining(`#${id}:3: line is not valid JSON`) })
  })

  it('an unparsable last row (sealed as written: not a crash) is refused as a cut tail; accepted, it is cut like a torn line, kept in goalkeeper_session_tails first', async () => {
    const app = await launch(db.url)
    const session = await app.sessions.create({ cwd: '/work' })
    session.append('turn/start', { turn: 1 })
    session.append('note', { n: 1 })
    await app.sessions.close(session)
    const { rows: [first] } = await db.query('SELECT byte_offset, line FROM goalkeeper_session_records WHERE session_id = $1 AND seq = 1', [session.id])
    const { rows: [last] } = await db.query('SELECT byte_offset, line FROM goalkeeper_session_records WHERE session_id = $1 AND seq = 2', [session.id])
    await db.query(`UPDATE goalkeeper_session_records SET line = '{"seq":2,"at":' WHERE session_id = $1 AND seq = 2`, [session.id])
    // Per batch, the rows of the batch that holds it (seqs 1-2, written together) are cut with it.
    const cutFrom = BATCHED ? first : last
    const torn = `${BATCHED ? `${first.line}\n` : ''}{"seq":2,"at":\n`
    await expect(app.sessions.open(session.id)).rejects.toMatchObject({ code: 'SESSION_TRUNCATED', message: expect.stringContaining(`the log ends at seq ${BATCHED ? 0 : 1}, but its seal says seq 2 was written`) })
    const reopened = await app.sessions.open(session.id, { acceptTruncation: true })
    expect(reopened.repair).toMatchObject({ tornBytes: Buffer.byteLength(torn), sideFile: expect.stringContaining('goalkeeper_session_tails') })
    // The cut line is gone, the open turn was closed by the repair, all signed and in the summary row.
    const kept = BATCHED ? ['session/header', 'session/truncated'] : ['session/header', 'turn/start', 'session/truncated', 'turn/end']
    expect(reopened.records.map((r) => r.type)).toEqual(kept)
    const tails = await db.query('SELECT size, convert_from(bytes, $2) AS text FROM goalkeeper_session_tails WHERE session_id = $1', [session.id, 'UTF8'])
    expect(tails.rows).toEqual([{ size: String(cutFrom.byte_offset), text: torn }])
    const summary = await db.query('SELECT records FROM goalkeeper_sessions WHERE id = $1', [session.id])
    expect(summary.rows[0].records).toBe(kept.length)
    await app.sessions.close(reopened)
    const again = await app.sessions.open(session.id, { readOnly: true })
    expect(again.integrity).toMatchObject({ state: 'signed', lines: kept.length })
  })
})

describe('a lost connection', () => {
  it('a flush rejected while the connection is lost is written by the next one, and one line says so', async () => {
    const app = await launch(db.url)
    const warnings: string[] = []
    app.root.logger.exporter({ levels: { default: 1 }, export: (m) => void (m.type === 'warn' && warnings.push(format(...(m.args as [string])))) })
    const session = await app.sessions.create({ cwd: '/work' })
    session.append('note', { n: 1 })
    await app.sessions.flush(session)
    // The server drops every connection of the store and takes no new one for a while, as a restart would.
    const url = new URL(db.url)
    const name = decodeURIComponent(url.pathname.slice(1))
    url.pathname = '/postgres'
    const control = new pg.Client({ connectionString: url.toString() })
    await control.connect()
    try {
      await control.query(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS false`)
      await control.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [name])
      session.append('note', { n: 2 })
      await expect(app.sessions.flush(session)).rejects.toThrow()
      expect(warnings).toEqual([])
    } finally {
      await control.query(`ALTER DATABASE "${name}" WITH ALLOW_CONNECTIONS true`)
      await control.end()
    }
    await app.sessions.flush(session)
    expect(warnings).toHaveLength(1)
    // The logger's name says "session"; the line starts with the id (no "session session").
    expect(warnings[0]).toMatch(new RegExp(`^${session.id}: written on a later attempt after a write failed \\(.+\\); nothing was lost$`))
    await app.sessions.flush(session)
    expect(warnings).toHaveLength(1)
    expect((await db.query('SELECT count(*)::int AS n FROM goalkeeper_session_records WHERE session_id = $1', [session.id])).rows[0].n).toBe(3)
  })
})
