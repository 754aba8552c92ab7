import { appendEntries, COMPACT_BYTES, compactIndex, type LoadedIndex, later, loadIndex } from './kept-index.ts'
import { fromKept, keep, type Lister, listSessions, problemSummary, rebuildSummary, usable, versionOf } from './list.ts'
import { keptRemoval, summarizeSession } from './summary.ts'
import { byRecency, type IndexRow, type Kept } from './summary-index.ts'
import type { ListOptions, SessionSummary, SummaryFold } from './types.ts'

/** A session the index names, in the order it says; `summary` once checked against its log. */
interface Candidate {
  id: string
  updatedAt: number
  row?: IndexRow
  kept?: Kept
  summary?: SessionSummary
  /** Its check against its log, started ahead of the walk. */
  checking?: Promise<SessionSummary | undefined>
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
      // The rows still needed are checked at once: a stat each, whose wait dominates on a busy machine.
      for (let k = i; k < Math.min(candidates.length, i + limit - sessions.length); k++) {
        const ahead = candidates[k]
        ahead.checking ??= ahead.summary ? Promise.resolve(ahead.summary) : check(lister, index, ahead, folds, learnt)
      }
      const candidate = candidates[i]
      candidate.summary ??= await candidate.checking
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

/**
 * Every session the index names, newest first: the table's rows (already in order), with the journal's
 * later entries and the sessions open here merged in where their times put them.
 */
function candidatesOf(lister: Lister, index: LoadedIndex, folds: Readonly<Record<string, SummaryFold>>): Candidate[] {
  const extra = new Map<string, Candidate | null>()
  for (const [id, kept] of index.journal) extra.set(id, kept.entry.removed ? null : { id, updatedAt: kept.entry.summary.updatedAt, kept })
  for (const [id, session] of lister.open) {
    const summary = summarizeSession(session, folds)
    extra.set(id, { id, updatedAt: summary.updatedAt, summary })
  }
  const table: Candidate[] = []
  for (const row of index.opened!.rows) {
    const other = extra.get(row.id)
    // A journal entry made before the table's own entry (a whole listing read the log later) gives way.
    if (other === undefined || (other?.kept && !lister.open.has(row.id) && row.madeAt > (other.kept.entry.madeAt ?? 0))) {
      extra.delete(row.id)
      table.push({ id: row.id, updatedAt: row.updatedAt, row })
    }
  }
  const added = [...extra.values()].filter((c): c is Candidate => c !== null).sort(byRecency)
  return merge(table, added)
}

/** Two lists in recency order as one. */
function merge(a: Candidate[], b: Candidate[]): Candidate[] {
  if (!b.length) return a
  const merged: Candidate[] = []
  let i = 0
  let j = 0
  while (i < a.length || j < b.length) merged.push(j >= b.length || (i < a.length && byRecency(a[i], b[j]) <= 0) ? a[i++] : b[j++])
  return merged
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
