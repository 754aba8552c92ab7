import { readdir } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { testDatabase } from '@goalkeeper/test-kit'
import { CLI_TIMEOUT, compositionYml, jsonLines, run, sessionIdOf, useProject } from '@goalkeeper/test-kit'

const db = testDatabase()
const project = useProject()

const KEY = 'b2'.repeat(32)
const SECRET = 'sk-test-Zq8v1Lm3Xw9Rt6'
const answer = `export default many(async () => ({ text: 'Answer.' }))`
// The session entry as the default cordis.yml has it: the database and the key from the environment.
const onDatabase = { session: { database: '${GOALKEEPER_DATABASE_URL:-}', key: '${GOALKEEPER_SESSION_KEY:-}' } }
// The runner's own database variables stay out: their user info would be masked in every output line.
const env = { GOALKEEPER_SESSION_KEY: KEY, SERVICE_TOKEN: SECRET, DATABASE_URL: undefined }

describe('sessions in PostgreSQL from the command line', { timeout: CLI_TIMEOUT }, () => {
  it('run writes to the database; sessions, show and resume --database read and continue it; nothing goes to files, no secret to the rows', async () => {
    const p = await project({ script: answer, config: onDatabase })
    const first = await run([...p.globals, 'run', `hello, my token is ${SECRET}`], { env: { ...env, GOALKEEPER_DATABASE_URL: db.url } })
    expect(first.code, first.stderr).toBe(0)
    const id = sessionIdOf(first.stderr)

    const listed = await run([...p.globals, '--json', 'sessions', '--database', db.url], { env })
    expect(listed.code, listed.stderr).toBe(0)
    const rows = listed.stdout.trim().split('\n').map((line) => JSON.parse(line))
    expect(rows).toEqual([expect.objectContaining({ id, title: 'hello, my token is [redacted SERVICE_TOKEN]' })])
    expect(rows[0].file).toMatch(new RegExp(`^postgres://.*/${db.name}#${id}$`))

    const shown = await run([...p.globals, 'show', '--database', db.url, id], { env })
    expect(shown.code, shown.stderr).toBe(0)
    expect(shown.stdout).toContain('Answer.')

    const resumed = await run([...p.globals, 'resume', '--database', db.url, id, 'second'], { env })
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(sessionIdOf(resumed.stderr)).toBe(id)
    const texts = await db.query(`SELECT line FROM goalkeeper_session_records WHERE session_id = $1 AND line LIKE '%"type":"user/message"%' ORDER BY seq`, [id])
    expect(texts.rows.map((row) => JSON.parse(row.line).data.content[0].text)).toEqual(['hello, my token is [redacted SERVICE_TOKEN]', 'second'])

    // Every row of every table: the secret and the key are nowhere.
    const dump = await db.query(`SELECT string_agg(t::text, '\n') AS text FROM (SELECT s::text FROM goalkeeper_sessions s UNION ALL SELECT r::text FROM goalkeeper_session_records r UNION ALL SELECT l::text FROM goalkeeper_session_leases l) AS t`)
    expect(dump.rows[0].text).toContain(id)
    expect(dump.rows[0].text).not.toContain(SECRET)
    expect(dump.rows[0].text).not.toContain(KEY)
    await expect(readdir(p.sessions)).rejects.toMatchObject({ code: 'ENOENT' })

    // Without --database the same composition reads files: none there.
    const files = await run([...p.globals, '--json', 'sessions'], { env })
    expect(files.code, files.stderr).toBe(0)
    expect(files.stdout).toBe('')
  })

  it('an unreachable server, a bad URL, a missing key or a composition that ignores --database: one clear line, exit 64, the password masked', async () => {
    const p = await project({ script: answer, config: onDatabase })
    const unreachable = await run([...p.globals, 'sessions', '--database', 'postgres://app:Hunter2Hunter2@127.0.0.1:1/fleet'], { env })
    expect(unreachable.code).toBe(64)
    // One line, the password masked and the user name kept; a URL without a password is shown whole.
    expect(unreachable.stderr.trim().split('\n')).toEqual(['goalkeeper: sessions needs ctx.sessions: entry "session": apply failed: database postgres://app:***@127.0.0.1:1/fleet: cannot connect to it: connect ECONNREFUSED 127.0.0.1:1 (hint: fix the session entry of cordis.yml (or the database it names))'])
    const passwordless = await run([...p.globals, 'show', '--database', 'postgres://app@127.0.0.1:1/fleet', 'x'], { env })
    expect(passwordless.code).toBe(64)
    expect(passwordless.stderr.trim().split('\n')).toEqual(['goalkeeper: show needs ctx.sessions: entry "session": apply failed: database postgres://app@127.0.0.1:1/fleet: cannot connect to it: connect ECONNREFUSED 127.0.0.1:1 (hint: fix the session entry of cordis.yml (or the database it names))'])

    const bad = await run([...p.globals, 'show', '--database', 'mysql://app:Hunter2Hunter2@db/fleet', 'x'], { env })
    expect(bad.code).toBe(64)
    expect(bad.stderr).toMatch(/apply failed: database mysql:\/\/app:\*\*\*@db\/fleet is not a PostgreSQL URL \(it starts with mysql:\/\/, not postgres:\/\/\)/)
    expect(bad.stderr).not.toContain('Hunter2Hunter2')

    const keyless = await run([...p.globals, 'sessions', '--database', db.url], { env: { ...env, GOALKEEPER_SESSION_KEY: undefined } })
    expect(keyless.code).toBe(64)
    expect(keyless.stderr).toContain('database is set but no shared signing key: set key: ${GOALKEEPER_SESSION_KEY} in the session entry')

    const ignoring = await project({ script: answer, yml: compositionYml({ sessions: p.sessions, script: p.script }) })
    const ignored = await run([...ignoring.globals, 'sessions', '--database', db.url], { env })
    expect(ignored.code).toBe(64)
    expect(ignored.stderr).toContain(`--database: the session entry of ${ignoring.yml} does not read GOALKEEPER_DATABASE_URL`)
  })

  it('a row edited in the database: show --database warns at it and marks what follows, exit 0 as for a file; sessions marks the session', async () => {
    const p = await project({ script: answer, config: onDatabase })
    const first = await run([...p.globals, 'run', 'hello'], { env: { ...env, GOALKEEPER_DATABASE_URL: db.url } })
    expect(first.code, first.stderr).toBe(0)
    const id = sessionIdOf(first.stderr)
    const edited = await db.query(`UPDATE goalkeeper_session_records SET line = replace(line, 'Answer.', 'Forged.') WHERE session_id = $1 AND seq = (SELECT min(seq) FROM goalkeeper_session_records WHERE session_id = $1 AND line LIKE '%Answer.%') RETURNING seq`, [id])
    expect(edited.rowCount).toBe(1)
    // In a log of version 2 the signature is a batch's: the warning names the batch holding the edited row.
    const rows = (await db.query('SELECT seq, line FROM goalkeeper_session_records WHERE session_id = $1 ORDER BY seq', [id])).rows
    const editedSeq = Number(edited.rows[0].seq)
    const start = rows.map((row) => ({ seq: Number(row.seq), size: JSON.parse(row.line).batch ?? 1 })).find((row) => row.seq <= editedSeq && editedSeq < row.seq + row.size)!.seq
    const line = start + 1
    // As the file store: the transcript is shown, with the warning at the first line that does not verify.
    const shown = await run([...p.globals, 'show', '--database', db.url, id], { env })
    expect(shown.code, shown.stderr).toBe(0)
    const out = shown.stdout.split('\n')
    const warning = out.findIndex((text) => text.startsWith('!! TAMPERED: '))
    expect(out[warning]).toMatch(new RegExp(`^!! TAMPERED: postgres://.*#${id}:${line}: (line does not match its signature|lines ${line}-\\d+ \\(one batch\\) do not match their signature)`))
    const marked = out.slice(warning + 2).filter((text) => text.trim())
    expect(marked.every((text) => text.startsWith('unverified |'))).toBe(true)
    expect(marked.slice(-2)).toEqual(['unverified |   assistant: Forged.', 'unverified |   turn 1 completed'])
    const json = await run([...p.globals, '--json', 'show', '--database', db.url, id], { env })
    expect(jsonLines(json.stdout)[0]).toMatchObject({ type: 'integrity', integrity: { state: 'tampered', line } })
    const listed = await run([...p.globals, 'sessions', '--database', db.url], { env: { ...env, COLUMNS: '200' } })
    expect(listed.code, listed.stderr).toBe(0)
    expect(listed.stdout).toMatch(new RegExp(`^${id} !.*\\btampered\\s+tampered: `, 'm'))
    expect(listed.stderr).toContain('1 session marked ! was changed by someone other than goalkeeper from the line named on; show reads it, resume refuses')
    const resumed = await run([...p.globals, 'resume', '--database', db.url, id, 'again'], { env })
    expect(resumed.code).toBe(64)
    expect(resumed.stdout).toBe('')
  })
})
