import type { FleetService, GoalRunnerOptions } from '@goalkeeper/fleet'
import type { Context } from 'cordis'
import { type App, startApp } from '../../app.ts'
import { builtinPlugins } from '../../builtins.ts'
import type { CommandContext } from '../../command.ts'
import { describeError } from '@goalkeeper/kit'
import { asHostError, HostError } from '../../errors.ts'
import { ExitCode } from '../../exit-codes.ts'
import { DATABASE_VARIABLE } from '../lookup/database.ts'
import { PERMISSIONS_VARIABLE } from '../lookup/permissions.ts'

/**
 * The database of the queue: --database, else GOALKEEPER_DATABASE_URL (what the default cordis.yml's session
 * entry reads), else DATABASE_URL. The fleet plugin's own `database` wins over all three.
 */
export function databaseOf(options: { database?: string }): string | undefined {
  return options.database || process.env[DATABASE_VARIABLE] || process.env.DATABASE_URL || undefined
}

/**
 * The composition's fleet plugin (entries load only up to it and the session entry), or the plugin with its
 * defaults when the cordis.yml has none: `submit`, `queue` and `worker` work with any composition.
 */
export async function openFleet(cli: CommandContext, options: { signals?: boolean } = {}): Promise<{ app: App; fleet: FleetService }> {
  // Up to the session entry too: its key is checked against the fleet's.
  const until = (ctx: Context) => !!ctx.get('fleet') && !!ctx.get('sessions')
  // A failed entry is the command's to report, in one line (compositionKey), not the loader's.
  const app = await cli.startApp({ until, signals: options.signals ?? false, reportsFailedEntries: true })
  if (!app.ctx.get('fleet')) await app.ctx.plugin(await import('@goalkeeper/fleet'))
  return { app, fleet: app.ctx.get('fleet')! }
}

/**
 * How the worker composes each goal: the goal's cordis.yml loaded as the CLI loads one (its log level and
 * stderr, no signals of its own), with the worker's database and permission mode in the environment.
 */
export function goalRunner(cli: CommandContext, database: string | undefined): GoalRunnerOptions {
  return {
    startApp: ({ config, cwd, builtins }) => {
      const env = {
        ...process.env,
        // The goal's session store reads it (the default cordis.yml's session entry does).
        ...(database ? { [DATABASE_VARIABLE]: database } : {}),
        ...(cli.globals.permissions ? { [PERMISSIONS_VARIABLE]: cli.globals.permissions } : {}),
      }
      return startApp({ config, cwd, logLevel: cli.globals.logLevel, stderr: cli.io.stderr, signals: false, env, builtins, reportsFailedEntries: true })
    },
    builtins: builtinPlugins,
    config: cli.globals.config,
    ...(database ? { databaseVariable: DATABASE_VARIABLE } : {}),
    note: (line) => cli.note(line),
  }
}

/** A fleet failure as the CLI reports it: a bad job or missing database is a usage error (64), the rest runtime (70). */
export function fleetHostError(error: unknown): unknown {
  const { code, hint } = (error ?? {}) as { code?: unknown; hint?: unknown }
  if (error instanceof Error && error.name === 'FleetError') {
    const usage = code === 'BAD_JOB' || code === 'NO_DATABASE' || code === 'KEY_MISMATCH'
    return new HostError(error.message, { exitCode: usage ? ExitCode.USAGE : ExitCode.RUNTIME, hint: typeof hint === 'string' ? hint : undefined, cause: error })
  }
  // Refused connections, unknown hosts, and PostgreSQL's connection (08), authorization (28) and missing-database (3D) classes.
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'ETIMEDOUT' || (typeof code === 'string' && /^(08|28|3D)[0-9A-Z]{3}$/.test(code))) {
    return new HostError(`cannot use the queue's database: ${describeError(error)}`, { hint: 'check --database, GOALKEEPER_DATABASE_URL or DATABASE_URL', cause: error })
  }
  return asHostError(error)
}
