import type { Context } from 'cordis'
import Schema from 'schemastery'
import * as session from '@goalkeeper/session'
import { LISTING_FOLDS } from './listing-folds.ts'
import { sessionTotalsFold } from './commands/render/totals.ts'

/**
 * What a cordis.yml entry named `@goalkeeper/session` starts: the session service together with the
 * store its `database` or `dir` chooses (PostgreSQL, else JSONL files), as one entry always did. A
 * composition that loads a store plugin itself, in an entry above this one, keeps its store.
 */
export const name = 'session'
export const inject: string[] = []

export const Config = Schema.intersect([
  session.Config,
  Schema.object({
    dir: Schema.string().default('').description('JSONL files (`@goalkeeper/session-jsonl`): their directory; empty: $XDG_STATE_HOME/goalkeeper/sessions/<project-key>, the project being the git top level, else the working directory.'),
    database: Schema.string().default('').description('PostgreSQL URL, normally ${GOALKEEPER_DATABASE_URL}: sessions are kept there (`@goalkeeper/session-postgres`) instead of files in dir.'),
    leaseMs: Schema.natural().min(100).default(30_000).description('With database: how long a writer\'s lease on a session lasts without renewal.'),
  }),
])
export type Config = Schemastery.TypeT<typeof Config>

export const apply = async (ctx: Context, config: Config) => {
  const { dir, database, leaseMs, ...service } = config
  if (ctx.get('sessionStore')) {
    if (dir || database) throw Object.assign(new Error('the session entry sets dir or database, but an entry above it already provides the session store: configure that entry instead'), { code: 'SESSION_CONFIG' })
  } else if (database) {
    await ctx.plugin(await import('@goalkeeper/session-postgres'), { url: database, leaseMs })
  } else {
    await ctx.plugin(await import('@goalkeeper/session-jsonl'), { dir })
  }
  await ctx.plugin(session, service)
  ctx.plugin({ name: 'listing-folds', inject: ['sessions'], apply: (inner: Context) => inner.sessions.keepFolds(LISTING_FOLDS) })
  // Kept for its checkpoints rather than for listings: they carry the totals chat's /cost, /diff and /resume tell.
  ctx.plugin({ name: 'session-totals', inject: ['sessions'], apply: (inner: Context) => inner.sessions.keepFolds({ totals: sessionTotalsFold((name) => inner.get('tools')?.get(name)) }) })
}
