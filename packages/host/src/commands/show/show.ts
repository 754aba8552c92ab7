import { defineCommand } from '../../command.ts'
import { asHostError } from '../../errors.ts'
import { ExitCode } from '../../exit-codes.ts'
import { assertSessions, databaseEnv } from '../lookup/database.ts'
import { resolveSessionId } from '../lookup/session-id.ts'
import { renderTranscript } from './transcript.ts'

export default defineCommand({
  name: 'show',
  description: 'print a session as a readable transcript, or with --json its raw records (read-only)',
  configure: (command) =>
    command
      .argument('<id>', 'the session (its id, or an unambiguous part of it; see `goalkeeper sessions`)')
      .option('--full', 'show tool results, arguments and goal round prompts whole')
      .option('--database <url>', 'read the session from this PostgreSQL database instead of files')
      .addHelpText('after', `
The session (a file, or rows of the --database) is only read, never repaired or written.

Exit codes: 0 shown, 64 no such session, an ambiguous id, or bad configuration.`),
  async run(cli, [id], options) {
    // Reading sessions needs the session store only: the entries below it (models, agents) are not started.
    // A failed session entry is reported once, by assertSessions.
    const app = await cli.startApp({ until: (ctx) => !!ctx.get('sessions'), reportsFailedEntries: true, ...databaseEnv(options.database) })
    assertSessions(app, cli.globals, 'show', databaseEnv(options.database).database)
    const sessions = app.ctx.get('sessions')!
    const session = await sessions.open(await resolveSessionId(sessions, String(id), cli.globals), { readOnly: true }).catch((error) => {
      throw asHostError(error)
    })
    try {
      if (cli.globals.json) for (const record of session.records) cli.printJson(record)
      else for (const line of renderTranscript(session.records, { full: !!options.full })) cli.print(line)
    } finally {
      await sessions.close(session)
    }
    return ExitCode.OK
  },
})
