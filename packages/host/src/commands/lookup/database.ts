import type { App } from '../../app.ts'
import type { GlobalOptions } from '../../command.ts'
import { HostError } from '../../errors.ts'
import { assertServices } from './services.ts'

/** The variable `--database` sets for the composition; the default cordis.yml's session entry reads it. */
export const DATABASE_VARIABLE = 'GOALKEEPER_DATABASE_URL'

/** What to start the app with for `--database`. */
export function databaseEnv(url: unknown): { database?: string } {
  return typeof url === 'string' ? { database: url } : {}
}

/**
 * ctx.sessions is there, and on the database `--database` named. A session entry that failed (a bad URL,
 * an unreachable server, a missing key) is reported with its own error line, which names the entry and
 * what failed (the password masked).
 */
export function assertSessions(app: App, globals: Pick<GlobalOptions, 'cwd' | 'config'>, purpose: string, database?: string): void {
  if (!app.ctx.get('sessions')) {
    const failed = app.report.entries.flatMap((entry) => (entry.status === 'failed' && entry.error ? [entry.error] : []))
    if (failed.length) throw new HostError(`${purpose} needs ctx.sessions: ${failed.join('; ')}`, { hint: 'fix the session entry of cordis.yml (or the database it names)' })
  }
  assertServices(app, globals, ['sessions'], purpose)
  if (database === undefined) return
  if (!app.ctx.get('sessions')!.dir.startsWith('postgres')) {
    throw new HostError(`--database: the session entry of ${app.report.file} does not read ${DATABASE_VARIABLE}, so sessions would come from ${app.ctx.get('sessions')!.dir}`, {
      hint: `add \`database: \${${DATABASE_VARIABLE}:-}\` to the config of its session entry`,
    })
  }
}
