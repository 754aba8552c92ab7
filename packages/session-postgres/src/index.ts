import type { Context } from 'cordis'
import Schema from 'schemastery'
import type {} from '@goalkeeper/session'
import { openPostgresStore } from './store.ts'

export { openPostgresStore, PostgresSessionStore, type PostgresStoreOptions } from './store.ts'
export { migrate, MIGRATIONS } from './migrations.ts'
export { maskUrl } from './url.ts'
export { guardConnections, isConnectionLoss, type RetryOptions, SETUP_LOCK, underSetupLock, withRetry } from './setup.ts'

export const name = 'session-postgres'
export const inject: string[] = []

export const Config = Schema.object({
  url: Schema.string().role('secret').required().description('PostgreSQL URL (postgres://user:password@host:5432/db), normally ${GOALKEEPER_DATABASE_URL}. A ?options=-c search_path=NAME suffix puts the tables in schema NAME.'),
  leaseMs: Schema.natural().min(100).default(30_000).description('How long a writer\'s lease on a session lasts without renewal (renewed every third of it); a writer that stops renewing loses the session to the next one after this.'),
  poolSize: Schema.natural().min(1).default(4).description('Connections in the pool.'),
})
export type Config = Schemastery.TypeT<typeof Config>

export const apply = async (ctx: Context, config: Config) => {
  // Connected and migrated before the store is provided: the session service starts on a ready database.
  const store = await openPostgresStore(config.url, { leaseMs: config.leaseMs, poolSize: config.poolSize })
  // The pool is closed last, once the session service let go of the store (its last flushes need it),
  // whichever of the two a shutdown stops first.
  ctx.effect(function* () {
    yield async () => {
      await store.whenReleased()
      await store.close()
    }
    yield ctx.provide('sessionStore', store)
  }, 'session-store')
}
