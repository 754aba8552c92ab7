import { readdir } from 'node:fs/promises'
import type { Context } from 'cordis'
import type * as Session from '@goalkeeper/session'

/** The session service's config and what chooses its store, as a session entry of a cordis.yml takes them. */
export type SessionStackConfig = Partial<Session.Config> & {
  /** JSONL files in this directory (the default store). */
  dir?: string
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
    const { dir, database, leaseMs, store, ...service } = config
    if (store) ctx.provide('sessionStore', store)
    else if (database) await ctx.plugin(await import('@goalkeeper/session-postgres'), { url: database, ...(leaseMs !== undefined && { leaseMs }) })
    else await ctx.plugin(await import('@goalkeeper/session-jsonl'), { dir: dir ?? '' })
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

/**
 * `count` sessions of `sessions`, one record `x` ({ i }) each, closed, so the listing tests have many kept
 * sessions (on files or PostgreSQL); their ids in the order of `i`. `atOnce` are written at a time; at 1 one
 * after another, so on a clock that only moves forward the later ones are the newer.
 */
export async function writeClosedSessions(sessions: Session.SessionService, count: number, { cwd, atOnce = 1 }: { cwd: string; atOnce?: number }): Promise<string[]> {
  const ids: string[] = new Array(count)
  let next = 0
  const writer = async () => {
    for (let i = next++; i < count; i = next++) {
      const session = await sessions.create({ cwd })
      session.append('x', { i })
      await sessions.close(session)
      ids[i] = session.id
    }
  }
  await Promise.all(Array.from({ length: Math.min(atOnce, count) }, writer))
  return ids
}

/**
 * Wraps the named methods of `target` in place so each call's first argument is kept (in `calls`, by method)
 * before the method runs: what a listing asked its store for. `reset()` empties the lists, keeping the arrays.
 */
type FirstArgument<F> = F extends (first: infer A, ...rest: any[]) => unknown ? A : never

export function countCalls<T extends object, K extends keyof T & string>(target: T, methods: readonly K[]): { calls: { [M in K]: FirstArgument<T[M]>[] }; reset(): void } {
  const calls = {} as { [M in K]: unknown[] }
  for (const method of methods) {
    const original = (target[method] as (...args: unknown[]) => unknown).bind(target)
    const seen: unknown[] = (calls[method] = [])
    ;(target as Record<K, unknown>)[method] = (...args: unknown[]) => {
      seen.push(args[0])
      return original(...args)
    }
  }
  return { calls: calls as { [M in K]: FirstArgument<T[M]>[] }, reset: () => { for (const method of methods) calls[method].length = 0 } }
}
