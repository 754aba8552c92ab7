import { describeGoalStatus, describeShortfall, describeSpend, describeVerification, type Goal, type GoalSummary } from '@goalkeeper/goal'
import type { SessionService, SessionSummary } from '@goalkeeper/session'
import { InvalidArgumentError } from 'commander'
import { type CommandContext, defineCommand } from '../command.ts'
import { asHostError, HostError } from '../errors.ts'
import { ExitCode } from '../exit-codes.ts'
import { resolveSessionId } from './lookup/session-id.ts'
import { assertSessions, databaseEnv } from './lookup/database.ts'
import { assertFleetKeyOf } from './lookup/fleet-key.ts'
import { LISTING_FOLDS } from '../listing-folds.ts'
import { fitTable, formatTime, oneLine, outputWidth, type Shrinkable } from './render/text.ts'

interface Row extends SessionSummary {
  goal: Goal | null
  /** The fleet worker that last claimed the session (its last `fleet/claim` record), if a worker ran it. */
  worker?: string
  /** Why the goal could not be read (a corrupt log). */
  goalError?: string
}

/** Logs that read but cannot be trusted as they are: listed with what they hold, their goal not shown. */
const UNTRUSTED: Record<string, string | undefined> = { SESSION_TAMPERED: 'tampered', SESSION_TRUNCATED: 'cut short', SESSION_UNSIGNED: 'unsigned' }

function parseLimit(value: string): number {
  const limit = Number(value)
  if (!/^\d+$/.test(value) || limit < 1) throw new InvalidArgumentError('expected a positive whole number.')
  return limit
}

/** The goal of a saved session, as its summary keeps it (the goal fold ran when the summary was built). */
function goalOf(folds: SessionSummary['folds']): Pick<Row, 'goal' | 'goalError' | 'worker'> {
  const worker = folds?.worker as string | null | undefined
  const kept = folds?.goal as GoalSummary | undefined
  const claimed = typeof worker === 'string' ? { worker } : {}
  if (!kept) return { goal: null, ...claimed }
  return 'error' in kept ? { goal: null, goalError: kept.error, ...claimed } : { goal: kept.goal, ...claimed }
}

function goalCell(row: Row): string {
  if (row.goalError) return 'unreadable'
  if (!row.goal) return '-'
  const reason = row.goal.phase === 'blocked' && row.goal.blockedReason ? ` (${row.goal.blockedReason.code})` : ''
  const spend = describeSpend(row.goal)
  // Last, so a narrow terminal cuts it before the rounds: what a complete goal stood on, or what kept an open
  // one from completing, worded by the goal package.
  const evidence = row.goal.phase === 'complete' ? describeVerification(row.goal) : describeShortfall(row.goal)
  return `${row.goal.phase}${reason} ${row.goal.roundsStarted}/${row.goal.maxGoalRounds}${spend ? `, ${spend}` : ''}${evidence ? `; ${evidence}` : ''}`
}

export interface SessionsOptions {
  limit: number
  all?: boolean
  yes?: boolean
  database?: string
}

export default defineCommand<SessionsOptions>({
  name: 'sessions',
  description: 'list recent sessions: id, start, last activity, goal phase, rounds and spend, title (read-only)',
  configure: (command) =>
    command
      .option('-n, --limit <n>', 'how many sessions, newest activity first', parseLimit, 20)
      .option('--all', 'list every session of every project, with the directory each was started in')
      .argument('[action]', '`adopt`: sign a session from before sessions were signed, so that it can be resumed')
      .argument('[id]', 'the session to adopt')
      .option('--yes', 'with adopt: you checked the session (goalkeeper show <id>) and vouch for every line of it')
      .option('--database <url>', 'list the sessions of this PostgreSQL database (every machine that writes to it) instead of files')
      .addHelpText('after', `
Sessions are kept per project: the git top level of the workspace (--cwd), else the workspace
itself, so they are listed from any directory of it. They live in the session plugin's directory
(default ~/.local/state/goalkeeper/sessions/<project-key>; sessions kept per directory before, and
those in the workspace's .goalkeeper/sessions, are listed too). --all lists every project's.
With --database URL (or a session entry whose database is set): the sessions of that PostgreSQL
database, written from any machine. With --json: one object per session and line. Sessions are only
read, never repaired or written; the listing keeps a signed summary of each (beside the files, or in
the database), rebuilt when stale.

\`goalkeeper sessions adopt <id> --yes\` signs a session whose log carries no signatures (written before
sessions were signed): resume refuses such a log, since one whose signatures were removed looks the
same. Read it with show first; adopting signs over every line as it is now.

Exit codes: 0 listed (also when there are none) or adopted, 64 bad command line or configuration, a
session that cannot be adopted, or adopt without --yes.`),
  async run(cli, [action, id], options) {
    if (action !== undefined && action !== 'adopt') throw new HostError(`unknown sessions action "${action}"`, { hint: 'the only one is adopt: goalkeeper sessions adopt <id> --yes' })
    if (action === 'adopt' && !id) throw new HostError('sessions adopt needs the id of the session to adopt', { hint: 'goalkeeper sessions adopt <id> --yes' })
    // Reading sessions needs the session store only: the entries below it (models, agents) are not started.
    // A failed session entry is reported once, by assertSessions.
    const app = await cli.startApp({ until: (ctx) => !!ctx.get('sessions'), reportsFailedEntries: true, ...databaseEnv(options.database) })
    assertSessions(app, cli.globals, 'sessions', databaseEnv(options.database).database)
    const sessions = app.ctx.get('sessions')!
    if (options.database) await assertFleetKeyOf(sessions, options.database, 'no session read')
    if (action === 'adopt') return adopt(cli, sessions, String(id), !!options.yes)
    // The goal comes from each log's kept summary. Without --all only the rows shown are checked against their logs.
    const listed = await (options.all ? sessions.list({ folds: LISTING_FOLDS, everywhere: true }).then((all) => ({ sessions: all, total: all.length })) : sessions.recent({ folds: LISTING_FOLDS, limit: options.limit })).catch((error) => {
      throw asHostError(error)
    })
    const chosen = listed.sessions
    const rows: Row[] = chosen.map(({ folds, ...summary }) => ({ ...summary, ...(summary.problem ? { goal: null, goalError: summary.problem.reason } : goalOf(folds)) }))
    if (cli.globals.json) {
      for (const row of rows) cli.printJson({ type: 'session', ...row, goalStatus: row.goal ? describeGoalStatus(row.goal) : null })
      return ExitCode.OK
    }
    if (!rows.length) {
      cli.note(`no sessions yet in ${sessions.dir}`)
      return ExitCode.OK
    }
    // The worker column appears once a fleet worker ran one of the sessions listed (goalkeeper worker).
    const workers = rows.some((row) => row.worker)
    // Every project's sessions: which directory each belongs to.
    const directories = !!options.all
    const header = ['ID', 'STARTED', 'LAST ACTIVITY', 'GOAL', ...(workers ? ['WORKER'] : []), ...(directories ? ['DIRECTORY'] : []), 'TITLE']
    const cells = rows.map((row) => {
      const worker = [...(workers ? [row.worker ?? '-'] : []), ...(directories ? [row.cwd || '-'] : [])]
      if (!row.problem) return [row.id, formatTime(row.createdAt), formatTime(row.updatedAt), goalCell(row), ...worker, oneLine(row.title ?? (row.goal ? `goal: ${row.goal.objective}` : ''), 60)]
      // A tampered, cut or unsigned log is readable, but its goal cannot be trusted: not shown.
      if (row.problem.otherKey) return [`${row.id} !`, formatTime(row.createdAt), formatTime(row.updatedAt), 'other key', ...worker, oneLine(`signed with another key: ${row.problem.reason}`, 200)]
      const label = UNTRUSTED[row.problem.code]
      if (label) return [`${row.id} !`, formatTime(row.createdAt), formatTime(row.updatedAt), label, ...worker, oneLine(`${label}: ${row.problem.reason}`, 200)]
      return [`${row.id} !`, '-', '-', 'unreadable', ...worker, oneLine(`${row.problem.code === 'SESSION_CORRUPT' || row.problem.code === 'SESSION_BAD_SEQ' ? 'corrupt' : 'unreadable'}: ${row.problem.reason}`, 200)]
    })
    for (const line of fitColumns([header, ...cells], outputWidth(cli.io.stdout), { workers, directories })) cli.print(line)
    const count = (code: string) => rows.filter((row) => row.problem?.code === code).length
    const otherKey = rows.filter((row) => row.problem?.otherKey).length
    const tampered = count('SESSION_TAMPERED') - otherKey
    const cut = count('SESSION_TRUNCATED')
    const unsigned = count('SESSION_UNSIGNED')
    const bad = rows.filter((row) => row.problem).length - tampered - otherKey - cut - unsigned
    const them = (n: number) => (n === 1 ? 'it' : 'them')
    if (bad) cli.note(`${bad} session${bad === 1 ? '' : 's'} marked ! cannot be read; the reason names the file and line`)
    if (tampered) cli.note(`${tampered} session${tampered === 1 ? ' marked ! was' : 's marked ! were'} changed by someone other than goalkeeper from the line named on; show reads ${them(tampered)}, resume refuses`)
    if (otherKey) cli.note(`${otherKey} session${otherKey === 1 ? ' marked ! was' : 's marked ! were'} signed with another key than this machine's (the key id is named); show reads ${them(otherKey)}, resume refuses: use the key that wrote ${them(otherKey)}`)
    if (cut) cli.note(`${cut} session${cut === 1 ? ' marked ! was' : 's marked ! were'} cut short (records lost from the end); show reads ${them(cut)}, resume refuses without --accept-truncation`)
    if (unsigned) cli.note(`${unsigned} session${unsigned === 1 ? ' marked ! is' : 's marked ! are'} not signed; show reads ${them(unsigned)}, resume refuses until adopted (goalkeeper sessions adopt <id> --yes)`)
    if (listed.total > rows.length) cli.note(`${listed.total - rows.length} older sessions not shown (--all lists them)`)
    return ExitCode.OK
  },
})

/**
 * The table at `width`: DIRECTORY (keeping its end) and TITLE give way first, then WORKER and GOAL; when
 * that is not enough, STARTED is left out. The id is never cut: it is what other commands take.
 */
function fitColumns(rows: string[][], width: number, { workers, directories }: { workers: boolean; directories: boolean }): string[] {
  const fitWidth = (table: string[][]) => {
    const title = table[0].length - 1
    const goal = table[0].indexOf('GOAL')
    const shrinkable: Shrinkable[] = [
      ...(directories ? [{ column: title - 1, min: 10, keep: 'end' as const }] : []),
      { column: title, min: 10 },
      ...(workers ? [{ column: goal + 1, min: 8 }] : []),
      { column: goal, min: 14 },
    ]
    return fitTable(table, width, shrinkable)
  }
  const lines = fitWidth(rows)
  if (lines.every((line) => Array.from(line).length <= width)) return lines
  return fitWidth(rows.map((row) => row.filter((_, column) => column !== 1)))
}

/**
 * Signs an unsigned log after the person confirmed (--yes) that they checked it: a log whose
 * signatures were removed looks the same as one from before signing, so only a person can tell.
 */
async function adopt(cli: CommandContext, sessions: SessionService, text: string, confirmed: boolean): Promise<ExitCode> {
  const id = await resolveSessionId(sessions, text, cli.globals)
  const view = await sessions.open(id, { readOnly: true }).catch((error) => {
    throw asHostError(error)
  })
  const { integrity } = view
  await sessions.close(view)
  if (integrity.state !== 'unsigned') {
    throw new HostError(`session ${id} is ${integrity.state === 'signed' ? 'already signed' : integrity.state === 'tampered' ? 'tampered' : 'cut short'}: only a log with no signatures at all can be adopted`, { hint: integrity.state === 'signed' ? 'resume it' : 'read it with show' })
  }
  if (!confirmed) {
    throw new HostError(`session ${id} is not signed: adopting it vouches for every one of its ${view.records.length} lines, including any a process other than goalkeeper wrote`, { hint: `read it with goalkeeper show ${id}, then run goalkeeper sessions adopt ${id} --yes` })
  }
  const session = await sessions.open(id, { adopt: true }).catch((error) => {
    throw asHostError(error)
  })
  await sessions.close(session)
  cli.note(`session ${id} adopted: its ${view.records.length} lines are signed over and it can be resumed`)
  return ExitCode.OK
}
