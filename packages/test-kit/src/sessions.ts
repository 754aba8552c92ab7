import { readdir } from 'node:fs/promises'
import type { Context } from 'cordis'
import type * as Session from '@goalkeeper/session'

/** The session service's config and what chooses its store, as a session entry of a cordis.yml takes them. */
export type SessionStackConfig = Partial<Session.Config> & {
  /** JSONL files in this directory (the default store). */
  dir?: string
  /** The JSONL store's `segmentBytes` (a live segment's size before the next checkpoint starts another). */
  segmentBytes?: number
  /** PostgreSQL at this URL instead of files. */
  database?: string
  leaseMs?: number
  /** A store given as it is (a test's wrapper around one), in place of the one `dir` or `database` names. */
  store?: Session.SessionStore
}

/**
 * The session service with the store its config names (PostgreSQL with `database`, else JSONL files in
 * `dir`), as the CLI starts a session entry: one plugin, so disposing its fiber stops both, the service first.
 */
export const sessionStack = {
  name: 'session-stack',
  apply: async (ctx: Context, config: SessionStackConfig = {}) => {
    const { dir, database, leaseMs, store, segmentBytes, ...service } = config
    if (store) ctx.provide('sessionStore', store)
    else if (database) await ctx.plugin(await import('@goalkeeper/session-postgres'), { url: database, ...(leaseMs !== undefined && { leaseMs }) })
    else await ctx.plugin(await import('@goalkeeper/session-jsonl'), { dir: dir ?? '', ...(segmentBytes !== undefined && { segmentBytes }) })
    await ctx.plugin(await import('@goalkeeper/session'), service)
  },
}

/**
 * The files of a sessions directory, sorted, without the listing's index of summaries and its journal: a
 * cache writers and listings keep (and may rewrite at any time), where a test asks what the logs are.
 */
export async function logFiles(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((name) => !name.startsWith('.summaries')).sort()
}
