import type { Logger } from 'cordis'
import { readSealCheck, type Signer } from './integrity.ts'
import type { SessionImpl } from './session.ts'
import type { SessionStore } from './store.ts'
import { keptSummary, type KeptSummary, openKept, summarizeRecords, summarizeStream } from './summary.ts'
import type { ListOptions, SessionSummary, SummaryFold } from './types.ts'

/** Logs read at once when their summary must be rebuilt, and logs checked at once against their kept summary. */
const READ_CONCURRENCY = 4
const CHECK_CONCURRENCY = 16

/**
 * Summaries of every session in the store, newest activity first. A log is read only when the summary
 * kept for it is missing, unsigned, made for another version of the log (any write, cut or
 * replacement changes it) or lacks a fold asked for; otherwise listing costs a `version` (a stat) and
 * the check of the kept summary's signature. Sessions open in this process are summarised from memory
 * (they may hold records not yet written); a log that cannot be read is listed with its problem
 * (file:line and reason), never hidden, and never hides the others; so is a tampered one (its
 * signatures are checked while it streams), with what it holds.
 */
export async function listSessions(store: SessionStore, open: ReadonlyMap<string, SessionImpl>, logger: Logger, signer: Signer, options: ListOptions = {}): Promise<SessionSummary[]> {
  const folds = options.folds ?? {}
  const [ids, kept] = await Promise.all([store.list({ everywhere: !!options.everywhere }), store.readSummaries({ everywhere: !!options.everywhere }).catch((error: Error) => {
    logger.debug('the kept session summaries cannot be read (they are rebuilt): %s', error.message)
    return new Map<string, string>()
  })])
  const summaries: SessionSummary[] = []
  const rebuilt = new Map<string, string>()
  const stale: string[] = []

  const problem = (id: string, error: unknown) => {
    const { code, line } = error as { code?: string; line?: number }
    logger.debug('%s cannot be read: %s', id, (error as Error).message)
    const reason = (error as Error).message
    return { id, file: store.locationOf(id), createdAt: 0, updatedAt: 0, records: 0, cwd: '', problem: { code: code ?? 'EIO', ...(line !== undefined && { line }), reason } }
  }
  const check = async (id: string) => {
    const session = open.get(id)
    if (session) return summaries.push(summarizeRecords(id, session.file, session.records, session.integrity, folds))
    let version
    try {
      version = await store.version(id)
    } catch (error) {
      // Removed between listing and reading: not worth a mention.
      if ((error as { code?: string }).code !== 'SESSION_NOT_FOUND') summaries.push(problem(id, error))
      return
    }
    const text = kept.get(id)
    const entry = text === undefined ? undefined : openKept(signer, id, text)
    if (entry && entry.token === version.token && covers(entry, folds)) return summaries.push(fromKept(entry, store.locationOf(id), folds))
    stale.push(id)
    return { id, version }
  }
  const rebuild = async (item: { id: string; version: { size: number; token: string } }) => {
    const { id } = item
    let { version } = item
    let summary: SessionSummary
    try {
      for (let attempt = 1; ; attempt++) {
        // The seal before the log: a writer seals only what it wrote.
        const seal = await readSealCheck(store, signer, id)
        summary = await summarizeStream(id, store.locationOf(id), store.stream(id, { end: version.size }), signer, folds, seal)
        if (summary.problem?.code !== 'SESSION_TRUNCATED' || attempt === 2) break
        // The size was taken before the seal: a log written meanwhile is read again as it is now.
        const now = await store.version(id)
        if (now.token === version.token) break
        version = now
      }
    } catch (error) {
      if ((error as { code?: string }).code === 'SESSION_NOT_FOUND') return
      summary = problem(id, error)
    }
    summaries.push(summary)
    rebuilt.set(id, keptSummary(signer, id, version.token, summary, folds))
  }

  const toRebuild = (await pool(ids, CHECK_CONCURRENCY, check)).filter((item): item is { id: string; version: { size: number; token: string } } => typeof item === 'object')
  await pool(toRebuild, READ_CONCURRENCY, rebuild)
  const present = new Set(ids)
  const removed = [...kept.keys()].filter((id) => !present.has(id))
  if (rebuilt.size || removed.length) {
    await store.writeSummaries(rebuilt, removed).catch((error: Error) => logger.debug('the session summaries cannot be kept: %s', error.message))
  }
  return summaries.sort((a, b) => b.updatedAt - a.updatedAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
}

/** Whether a kept summary holds the result of every fold asked for, made by the same version of it. */
function covers(entry: KeptSummary, folds: Readonly<Record<string, SummaryFold>>): boolean {
  for (const [name, fold] of Object.entries(folds)) if (entry.folds?.[name]?.version !== fold.version) return false
  return true
}

function fromKept(entry: KeptSummary, file: string, folds: Readonly<Record<string, SummaryFold>>): SessionSummary {
  const names = Object.keys(folds)
  return { ...entry.summary, id: entry.id, file, ...(names.length && { folds: Object.fromEntries(names.map((name) => [name, entry.folds![name].value])) }) }
}

async function pool<T, R>(items: readonly T[], concurrency: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const index = next++
      results[index] = await task(items[index])
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker))
  return results
}
