import { defineCommand } from '../../command.ts'
import { asHostError, HostError } from '../../errors.ts'
import { ExitCode } from '../../exit-codes.ts'
import { assertSessions, databaseEnv } from '../lookup/database.ts'
import { assertFleetKeyOf } from '../lookup/fleet-key.ts'
import { lastSessionId, resolveSessionId } from '../lookup/session-id.ts'
import { eventWidth } from '../render/text.ts'
import { renderTranscript, Transcript } from './transcript.ts'
import { once } from 'node:events'
import type { CommandContext } from '../../command.ts'
import { type Integrity, isRecordOf, type SessionReading, type SessionRecord } from '@goalkeeper/session'

export interface ShowOptions {
  full?: boolean
  database?: string
  last?: boolean
  tail?: boolean | string
}

export default defineCommand<ShowOptions>({
  name: 'show',
  description: 'print a session as a readable transcript, or with --json its records as JSON lines (read-only)',
  configure: (command) =>
    command
      .argument('[id]', 'the session (its id, or an unambiguous part of it; see `goalkeeper sessions`)')
      .option('--last', 'the most recent session of this project')
      .option('--full', 'show tool results, arguments and goal round prompts whole, lines not fitted')
      .option('--tail [turns]', 'only the last turn (or the last N turns), read from the last checkpoint: fast for a log of any length')
      .option('--database <url>', 'read the session from this PostgreSQL database instead of files')
      .addHelpText('after', `
The session (a file, or rows of the --database) is only read, never repaired or written.
A log changed by someone other than goalkeeper is still shown, with a warning at the first line that
does not verify and every line after it marked "unverified |"; a log cut short or not signed is shown
with a warning too. With --json, the first line is {"type":"integrity","integrity":{"state":...}}
(signed, unsigned, tampered with its line, or truncated with its last seq); then one
{"type":"record","session":ID,"record":{...}} line per record, as run --json streams them, and the lines
of records after the first bad line carry "unverified": true.

With --tail, only the session's last turns are shown. They are read from the log's last checkpoint (its
signed index places it) and back to where those turns start, and only those lines are verified: the time
and memory it takes follow the turns shown, not the length of the log. Plain show reads and verifies it all.

Exit codes: 0 shown, 64 no such session (or none for --last), an ambiguous id, or bad configuration.`),
  async run(cli, [id], options) {
    if (options.last && id !== undefined) throw new HostError('--last and an id both name a session', { hint: 'give one of them' })
    if (!options.last && id === undefined) throw new HostError('show needs the session: its id, or --last', { hint: 'goalkeeper sessions lists them' })
    // Reading sessions needs the session store only: the entries below it (models, agents) are not started.
    // A failed session entry is reported once, by assertSessions.
    const app = await cli.startApp({ until: (ctx) => !!ctx.get('sessions'), reportsFailedEntries: true, ...databaseEnv(options.database) })
    assertSessions(app, cli.globals, 'show', databaseEnv(options.database).database)
    const sessions = app.ctx.get('sessions')!
    if (options.database) await assertFleetKeyOf(sessions, options.database, 'no session read')
    const chosen = options.last ? await lastSessionId(sessions, cli.globals) : await resolveSessionId(sessions, String(id), cli.globals)
    const turns = tailTurns(options.tail)
    // Fitted to the terminal (or COLUMNS); piped without COLUMNS, and with --full, every line is whole.
    const width = options.full ? undefined : eventWidth(cli.io.stdout)
    if (turns === undefined) {
      // The whole log is printed while it streams: memory does not grow with it, and no size limit applies.
      const reading = await sessions.read(chosen).catch((error) => {
        throw asHostError(error)
      })
      try {
        await (cli.globals.json ? printJsonLines(cli, reading) : printTranscript(cli, reading, { full: !!options.full, width }))
      } catch (error) {
        // A corrupt line is met where it is: what came before it is printed, then the error names it.
        throw asHostError(error)
      }
      return ExitCode.OK
    }
    const session = await sessions.open(chosen, { readOnly: true, from: 'checkpoint', turns }).catch((error) => {
      throw asHostError(error)
    })
    const { integrity } = session
    // Read whole (no checkpoint yet), a log still shows only the turns asked for.
    const records = lastTurns(session.records, turns)
    try {
      if (cli.globals.json) {
        // The first line says what the signatures say; records past the first bad line are marked.
        cli.printJson({ type: 'integrity', integrity })
        const firstBad = integrity.state === 'tampered' ? integrity.line - 1 : Infinity
        // The shape `run --json` streams records in, so one reader takes both.
        for (const record of records) cli.printJson({ type: 'record', session: session.id, record, ...(record.seq >= firstBad ? { unverified: true } : {}) })
      } else {
        for (const line of renderTranscript(records, { full: !!options.full, integrity, width })) cli.print(line)
      }
    } finally {
      await sessions.close(session)
    }
    return ExitCode.OK
  },
})

/** The seq from which records do not verify, as `integrity` says now (Infinity: none so far). */
const firstBadOf = (integrity: Integrity) => (integrity.state === 'tampered' ? integrity.line - 1 : Infinity)

/** Waits while stdout holds more than it wants buffered: a log printed as it streams is never held as output either. */
async function drained(cli: CommandContext) {
  const out = cli.io.stdout as NodeJS.WritableStream & { writableNeedDrain?: boolean }
  if (out.writableNeedDrain) await once(out, 'drain')
}

/**
 * `--json`: the first line says what the signatures of the whole log say, so the log is read twice as it
 * streams: once to verify it, once to print it (against the same seal, up to the same byte), each record
 * marked when either read found it past the first bad line.
 */
async function printJsonLines(cli: CommandContext, reading: SessionReading) {
  for await (const record of reading) void record
  const integrity = reading.integrity
  cli.printJson({ type: 'integrity', integrity })
  const firstBad = firstBadOf(integrity)
  for await (const record of reading) {
    const unverified = record.seq >= Math.min(firstBad, firstBadOf(reading.integrity))
    // The shape `run --json` streams records in, so one reader takes both.
    cli.printJson({ type: 'record', session: reading.id, record, ...(unverified ? { unverified: true } : {}) })
    await drained(cli)
  }
}

/**
 * The transcript, printed as the log streams: a tampered line is found before any record from it is
 * handed on, so its warning comes where the bad part starts, as when the log was held whole. A log whose
 * header carries no signature (one from before signing, adopted or not, or stripped of its signatures) is
 * only known for what it is at its end, and its warning goes right after the header: it is read once to
 * verify it, then again to print it.
 */
async function printTranscript(cli: CommandContext, reading: SessionReading, options: { full: boolean; width?: number }) {
  let known: Integrity | undefined
  for (;;) {
    const transcript = new Transcript({ ...options, integrity: known })
    let restart = false
    for await (const record of reading) {
      const integrity = known ?? reading.integrity
      if (record.seq === 0 && !known && integrity.state === 'unsigned') {
        restart = true
        break
      }
      for (const line of transcript.add(record, integrity)) cli.print(line)
      if (record.seq === 0) for (const line of transcript.unsignedWarning(known)) cli.print(line)
      await drained(cli)
    }
    if (restart) {
      for await (const record of reading) void record
      known = reading.integrity
      continue
    }
    for (const line of transcript.end(known ?? reading.integrity)) cli.print(line)
    return
  }
}

/** The number of turns `--tail` asks for (1 without a number); undefined without `--tail`. */
function tailTurns(tail: boolean | string | undefined): number | undefined {
  if (tail === undefined || tail === false) return undefined
  if (tail === true) return 1
  const turns = Number(tail)
  if (!Number.isInteger(turns) || turns < 1) throw new HostError(`--tail takes a number of turns, a whole number from 1; got ${JSON.stringify(tail)}`, { hint: 'goalkeeper show ID --tail 3' })
  return turns
}

/** The records from the `turn/start` of the last `turns` turns on; all of them when there are fewer turns. */
function lastTurns(records: readonly SessionRecord[], turns: number): readonly SessionRecord[] {
  let found = 0
  for (let index = records.length - 1; index >= 0; index--) {
    if (isRecordOf(records[index], 'turn/start') && ++found === turns) return records.slice(index)
  }
  return records
}
