import { readdir } from 'node:fs/promises'
import type { Context } from 'cordis'
import { expect } from 'vitest'
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

/**
 * Appends one record of the caller's own test type with `data`: the caller names it (test code may append a
 * type nobody registered; the shared helpers here do not).
 */
export type MarkRecord = (session: Session.Session, data: Record<string, unknown>) => void

/**
 * `count` sessions of `sessions`, one record `mark` wrote ({ i }) each, closed, so the listing tests have many kept
 * sessions (on files or PostgreSQL); their ids in the order of `i`. `atOnce` are written at a time; at 1 one
 * after another, so on a clock that only moves forward the later ones are the newer.
 */
export async function writeClosedSessions(sessions: Session.SessionService, count: number, { cwd, mark, atOnce = 1 }: { cwd: string; mark: MarkRecord; atOnce?: number }): Promise<string[]> {
  const ids: string[] = new Array(count)
  let next = 0
  const writer = async () => {
    for (let i = next++; i < count; i = next++) {
      const session = await sessions.create({ cwd })
      mark(session, { i })
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

/**
 * What the recent-sessions listing does on files and on PostgreSQL alike once the log of `ids[1]` (`ids` newest
 * first, as `writeClosedSessions` wrote them) was edited by hand, `"i":4` made `"i":7`: it flags that log,
 * reading it alone, and reads nothing on the next listing; the oldest session, written again, then comes first
 * without a log read. `streamed` and `reset` count the store's `stream` calls (`countCalls`).
 */
export async function expectTamperedFlaggedAndRewrittenFirst(sessions: Session.SessionService, ids: string[], { streamed, reset, mark }: { streamed: unknown[]; reset(): void; mark: MarkRecord }): Promise<void> {
  reset()
  const listed = await sessions.recent({ limit: 2 })
  expect(listed.sessions.map((s) => s.id)).toEqual(ids.slice(0, 2))
  expect(listed.sessions[1].problem).toMatchObject({ code: 'SESSION_TAMPERED', line: 2 })
  expect(streamed).toEqual([ids[1]])
  // What was read is kept: the next listing reads nothing.
  reset()
  expect((await sessions.recent({ limit: 2 })).sessions[1].problem?.code).toBe('SESSION_TAMPERED')
  expect(streamed).toEqual([])

  // The oldest session written again (its writer keeps its summary at close) comes first.
  const session = await sessions.open(ids.at(-1)!)
  mark(session, { again: true })
  await sessions.close(session)
  reset()
  expect((await sessions.recent({ limit: 1 })).sessions).toEqual([expect.objectContaining({ id: ids.at(-1), records: 3 })])
  expect(streamed).toEqual([])
}
