import { type Goal, type GoalSummary, goalSummaryFold } from '@goalkeeper/goal'
import type { SessionSummary } from '@goalkeeper/session'
import { InvalidArgumentError } from 'commander'
import { defineCommand } from '../command.ts'
import { ExitCode } from '../exit-codes.ts'
import { assertSessions, databaseEnv } from './lookup/database.ts'
import { workerSummaryFold } from './lookup/worker-fold.ts'
import { describeSpend } from './render/spend.ts'
import { formatTime, oneLine, table } from './render/text.ts'

interface Row extends SessionSummary {
  goal: Goal | null
  /** The fleet worker that last claimed the session (its last `fleet/claim` record), if a worker ran it. */
  worker?: string
  /** Why the goal could not be read (a corrupt log). */
  goalError?: string
}

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
  return `${row.goal.phase}${reason} ${row.goal.roundsStarted}/${row.goal.maxGoalRounds}${spend ? `, ${spend}` : ''}`
}

export default defineCommand({
  name: 'sessions',
  description: 'list recent sessions: id, start, last activity, goal phase, rounds and spend, title (read-only)',
  configure: (command) =>
    command
      .option('-n, --limit <n>', 'how many sessions, newest activity first', parseLimit, 20)
      .option('--all', 'list every session')
      .option('--database <url>', 'list the sessions of this PostgreSQL database (every machine that writes to it) instead of files')
      .addHelpText('after', `
Sessions are kept per workspace (--cwd), in the session plugin's directory (default
~/.local/state/goalkeeper/sessions/<workspace-key>; also the workspace's .goalkeeper/sessions).
With --database URL (or a session entry whose database is set): the sessions of that PostgreSQL
database, written from any machine. With --json: one object per session and line. Sessions are only
read, never repaired or written; the listing keeps a signed summary of each (beside the files, or in
the database), rebuilt when stale.

Exit codes: 0 listed (also when there are none), 64 bad command line or configuration.`),
  async run(cli, _args, options) {
    // Reading sessions needs the session store only: the entries below it (models, agents) are not started.
    // A failed session entry is reported once, by assertSessions.
    const app = await cli.startApp({ until: (ctx) => !!ctx.get('sessions'), reportsFailedEntries: true, ...databaseEnv(options.database) })
    assertSessions(app, cli.globals, 'sessions', databaseEnv(options.database).database)
    const sessions = app.ctx.get('sessions')!
    // The goal comes from each log's kept summary: a listing reads no log that did not change since the last one.
    const summaries = await sessions.list({ folds: { goal: goalSummaryFold, worker: workerSummaryFold } })
    const chosen = options.all ? summaries : summaries.slice(0, options.limit)
    const rows: Row[] = chosen.map(({ folds, ...summary }) => ({ ...summary, ...(summary.problem ? { goal: null, goalError: summary.problem.reason } : goalOf(folds)) }))
    if (cli.globals.json) {
      for (const row of rows) cli.printJson(row)
      return ExitCode.OK
    }
    if (!rows.length) {
      cli.note(`no sessions yet in ${sessions.dir}`)
      return ExitCode.OK
    }
    // The worker column appears once a fleet worker ran one of the sessions listed (goalkeeper worker).
    const workers = rows.some((row) => row.worker)
    const header = ['ID', 'STARTED', 'LAST ACTIVITY', 'GOAL', ...(workers ? ['WORKER'] : []), 'TITLE']
    const cells = rows.map((row) => {
      const worker = workers ? [row.worker ?? '-'] : []
      if (!row.problem) return [row.id, formatTime(row.createdAt), formatTime(row.updatedAt), goalCell(row), ...worker, oneLine(row.title ?? (row.goal ? `goal: ${row.goal.objective}` : ''), 60)]
      // A tampered log is readable, but its goal would come from the unverified tail: not shown.
      if (row.problem.code === 'SESSION_TAMPERED') return [`${row.id} !`, formatTime(row.createdAt), formatTime(row.updatedAt), 'tampered', ...worker, oneLine(`tampered: ${row.problem.reason}`, 200)]
      return [`${row.id} !`, '-', '-', 'unreadable', ...worker, oneLine(`${row.problem.code === 'SESSION_CORRUPT' || row.problem.code === 'SESSION_BAD_SEQ' ? 'corrupt' : 'unreadable'}: ${row.problem.reason}`, 200)]
    })
    for (const line of table([header, ...cells])) cli.print(line)
    const tampered = rows.filter((row) => row.problem?.code === 'SESSION_TAMPERED').length
    const bad = rows.filter((row) => row.problem).length - tampered
    if (bad) cli.note(`${bad} session${bad === 1 ? '' : 's'} marked ! cannot be read; the reason names the file and line`)
    if (tampered) cli.note(`${tampered} session${tampered === 1 ? ' marked ! was' : 's marked ! were'} changed by someone other than goalkeeper from the line named on; show reads ${tampered === 1 ? 'it' : 'them'}, resume refuses`)
    if (summaries.length > rows.length) cli.note(`${summaries.length - rows.length} older sessions not shown (--all lists them)`)
    return ExitCode.OK
  },
})
