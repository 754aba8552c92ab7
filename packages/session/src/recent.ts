import { appendEntries, COMPACT_BYTES, compactIndex, type LoadedIndex, later, loadIndex } from './kept-index.ts'
import { fromKept, keep, type Lister, listSessions, problemSummary, rebuildSummary, usable, versionOf } from './list.ts'
import { keptRemoval, summarizeRecords } from './summary.ts'
import { byRecency, type IndexRow, type Kept } from './summary-index.ts'
import type { ListOptions, SessionSummary, SummaryFold } from './types.ts'

/** A session the index names, in the order it says; `summary` once checked against its log. */
interface Candidate {
  id: string
  updatedAt: number
  row?: IndexRow
  kept?: Kept
  summary?: SessionSummary
}

export interface RecentSessions {
  /** The most recent sessions, newest activity first, each checked against its log as it is now. */
  sessions: SessionSummary[]
  /** How many sessions there are in all, as the index knows them (every log created through goalkeeper). */
  total: number
}

/**
 * The `limit` most recent sessions, from the index of kept summaries: its table gives the order, and
 * only the rows shown are checked against their logs (a `version` each; a log whose token differs,
 * edited by hand included, is read again and moves to where it now belongs). Without a usable index
 * (none yet, or one that does not verify) every log is listed, and the index rebuilt from them.
 */
export async function recentSessions(lister: Lister, limit: number, options: ListOptions = {}): Promise<RecentSessions> {
  const own = lister.store.indexes?.()[0]
  const index = own && (await loadIndex(lister.signer, own))
  if (!own || !index?.opened) {
    // The whole listing reads the index again, says what is wrong with it, and rebuilds it.
    await index?.close()
    const all = await listSessions(lister, options)
    return { sessions: all.slice(0, limit), total: all.length }
  }
  const folds = options.folds ?? {}
  const learnt = new Map<string, string>()
  let result: RecentSessions
  try {
    const candidates = candidatesOf(lister, index, folds)
    const sessions: SessionSummary[] = []
    let dropped = 0
    for (let i = 0; i < candidates.length && sessions.length < limit; i++) {
      const candidate = candidates[i]
      candidate.summary ??= await check(lister, index, candidate, folds, learnt)
      if (!candidate.summary) {
        dropped++
        continue
      }
      candidate.updatedAt = candidate.summary.updatedAt
      // Read again from its log, it may belong further down: it is met again there.
      if (moveDown(candidates, i)) i--
      else sessions.push(candidate.summary)
    }
    result = { sessions, total: candidates.length - dropped }
  } finally {
    await index.close()
  }
  await keep(async () => {
    await appendEntries(own, learnt)
    if (index.journalBytes >= COMPACT_BYTES) await compactIndex(lister.signer, own)
  }, lister)
  return result
}

/** Every session the index names, newest first: the table's rows, the journal's later entries over them, the open sessions. */
function candidatesOf(lister: Lister, index: LoadedIndex, folds: Readonly<Record<string, SummaryFold>>): Candidate[] {
  const byId = new Map<string, Candidate>()
  for (const row of index.opened!.rows) byId.set(row.id, { id: row.id, updatedAt: row.updatedAt, row })
  for (const [id, kept] of index.journal) {
    const known = byId.get(id)
    if (known?.row && known.row.madeAt > (kept.entry.madeAt ?? 0)) continue
    if (kept.entry.removed) byId.delete(id)
    else byId.set(id, { id, updatedAt: kept.entry.summary.updatedAt, kept })
  }
  for (const [id, session] of lister.open) {
    const summary = summarizeRecords(id, session.file, session.records, session.integrity, folds)
    byId.set(id, { id, updatedAt: summary.updatedAt, summary })
  }
  return [...byId.values()].sort(byRecency)
}

/**
 * The candidate's summary as its log is now: its kept entry when made for this version of the log,
 * else read from it (and learnt, to be kept); undefined when the log is gone.
 */
async function check(lister: Lister, index: LoadedIndex, candidate: Candidate, folds: Readonly<Record<string, SummaryFold>>, learnt: Map<string, string>): Promise<SessionSummary | undefined> {
  const { id } = candidate
  let version
  try {
    version = await versionOf(lister, id)
  } catch (error) {
    if ((error as { code?: string }).code !== 'SESSION_NOT_FOUND') return problemSummary(lister, id, error)
    learnt.set(id, keptRemoval(lister.signer, id))
    return undefined
  }
  const kept = later(candidate.row && (await index.opened!.entry(candidate.row)), candidate.kept)
  if (kept && usable(kept.entry, version.token, folds)) return fromKept(kept.entry, lister.store.locationOf(id), folds)
  const rebuilt = await rebuildSummary(lister, id, version, folds)
  if (!rebuilt) return undefined
  learnt.set(id, rebuilt.kept.text)
  return rebuilt.summary
}

/** Moves candidate `i` down to where its (new) time puts it among the ones after it; whether it moved. */
function moveDown(candidates: Candidate[], i: number): boolean {
  const candidate = candidates[i]
  if (i + 1 >= candidates.length || byRecency(candidate, candidates[i + 1]) <= 0) return false
  let low = i + 1
  let high = candidates.length
  while (low < high) {
    const middle = (low + high) >> 1
    if (byRecency(candidates[middle], candidate) <= 0) low = middle + 1
    else high = middle
  }
  candidates.splice(low, 0, candidate)
  candidates.splice(i, 1)
  return true
}
