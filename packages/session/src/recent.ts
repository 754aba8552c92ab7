import { appendEntries, COMPACT_BYTES, compactIndex, type LoadedIndex, later, loadIndex } from './kept-index.ts'
import { fromKept, keep, type Lister, listSessions, problemSummary, rebuildSummary, usable, versionOf } from './list.ts'
import type { NewestSessions } from './store.ts'
import { keptRemoval, openKept, summarizeSession } from './summary.ts'
import { byRecency, IndexError, type IndexRow, type Kept, type OpenedIndex } from './summary-index.ts'
import type { ListOptions, SessionSummary, SummaryFold } from './types.ts'

/** A session the index names, in the order it says; `summary` once checked against its log. */
interface Candidate {
  id: string
  updatedAt: number
  row?: IndexRow
  kept?: Kept
  /** The store's row (`SessionStore.newest`), with the log's version as of `at`. */
  stored?: NewestSessions['sessions'][number] & { at: number }
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
 * edited by hand included, is read again and moves to where it now belongs). A store without an index
 * that keeps its sessions in order (`newest`, a database) gives the rows and their versions in one
 * query, checked the same way. Without either, or with an index that is not usable (none yet, or one
 * that does not verify) every log is listed, and the index rebuilt from them.
 */
export async function recentSessions(lister: Lister, limit: number, options: ListOptions = {}): Promise<RecentSessions> {
  const own = lister.store.indexes?.()[0]
  if (!own && lister.store.newest) return recentOfStore(lister, limit, options.folds ?? {})
  const index = own && (await loadIndex(lister.signer, own))
  if (!own || !index?.opened) {
    // The whole listing reads the index again, says what is wrong with it, and rebuilds it.
    await index?.close()
    return wholeListing(lister, limit, options)
  }
  const folds = options.folds ?? {}
  const learnt = new Map<string, string>()
  let result: RecentSessions | undefined
  try {
    result = await recentOfIndex(lister, index, limit, folds, learnt)
  } catch (error) {
    if (!(error instanceof IndexError)) throw error
  } finally {
    await index.close()
  }
  // A block of the table that does not verify: the whole listing finds it too, says so and rebuilds.
  if (!result) return wholeListing(lister, limit, options)
  await keep(async () => {
    await appendEntries(own, learnt)
    if (index.journalBytes >= COMPACT_BYTES) await compactIndex(lister.signer, own)
  }, lister)
  return result
}

async function wholeListing(lister: Lister, limit: number, options: ListOptions): Promise<RecentSessions> {
  const all = await listSessions(lister, options)
  return { sessions: all.slice(0, limit), total: all.length }
}

/**
 * `recentSessions` from a verified index: the head of its table (a few blocks), the journal and the
 * sessions open here merged in. More of the table is read only when checks dropped rows or moved
 * them down past what was read.
 */
async function recentOfIndex(lister: Lister, index: LoadedIndex, limit: number, folds: Readonly<Record<string, SummaryFold>>, learnt: Map<string, string>): Promise<RecentSessions> {
  const opened = index.opened!
  const extra = extraCandidates(lister, index, folds)
  const checks = new Map<string, Promise<SessionSummary | undefined>>()
  for (let window = limit; ; window *= 4) {
    const rows = await opened.head(window)
    const complete = rows.length >= opened.count
    const candidates = candidatesOf(lister, rows, extra, complete)
    const walked = await walk(candidates, limit, (candidate) => {
      const checking = check(lister, index, candidate, folds, learnt)
      checks.set(candidate.id, checking)
      return checking
    }, checks)
    if (complete) return { sessions: walked.sessions, total: candidates.length - walked.dropped }
    if (walked.sessions.length >= limit && !walked.movedLast) {
      return { sessions: walked.sessions, total: (await totalOf(opened, rows, extra)) - walked.dropped }
    }
  }
}

/**
 * How many sessions the index names, with only the head of its table read: its rows, less those the
 * journal says were removed, plus the journal's sessions it does not name (their id blocks read).
 */
async function totalOf(opened: OpenedIndex, rows: readonly IndexRow[], extra: ReadonlyMap<string, Candidate | null>): Promise<number> {
  const read = new Set(rows.map((row) => row.id))
  const unread = [...extra.keys()].filter((id) => !read.has(id))
  const named = await opened.names(unread)
  let total = opened.count
  for (const [id, candidate] of extra) {
    const inTable = read.has(id) || named.has(id)
    if (inTable && candidate === null) total--
    else if (!inTable && candidate !== null) total++
  }
  return total
}
/**
 * The first `limit` candidates whose check finds a session, in order: each checked (`check`) when its
 * turn is near, and moved down when its log says it belongs further down. `movedLast`: one was moved
 * down to the very end (candidates after the last, had there been, might have come before it).
 */
async function walk(
  candidates: Candidate[],
  limit: number,
  check: (candidate: Candidate) => Promise<SessionSummary | undefined>,
  checked?: ReadonlyMap<string, Promise<SessionSummary | undefined>>,
): Promise<{ sessions: SessionSummary[]; dropped: number; movedLast: boolean }> {
  const sessions: SessionSummary[] = []
  let dropped = 0
  let movedLast = false
  for (let i = 0; i < candidates.length && sessions.length < limit; i++) {
    // The rows still needed are checked at once: a stat each, whose wait dominates on a busy machine.
    for (let k = i; k < Math.min(candidates.length, i + limit - sessions.length); k++) {
      const ahead = candidates[k]
      ahead.checking ??= ahead.summary ? Promise.resolve(ahead.summary) : (checked?.get(ahead.id) ?? check(ahead))
    }
    const candidate = candidates[i]
    candidate.summary ??= await candidate.checking
    if (!candidate.summary) {
      dropped++
      continue
    }
    candidate.updatedAt = candidate.summary.updatedAt
    // Read again from its log, it may belong further down: it is met again there.
    if (moveDown(candidates, i)) {
      movedLast ||= candidates[candidates.length - 1] === candidate
      i--
    } else sessions.push(candidate.summary)
  }
  return { sessions, dropped, movedLast }
}

/**
 * `recentSessions` on a store that answers `newest`: the sessions open here from memory, the others in
 * the store's order with their kept summaries. A window of rows a little larger than `limit` is asked
 * for, and a larger one only when checks dropped or moved down rows past its end; what is read again
 * from the logs is kept (`writeSummaries`).
 */
async function recentOfStore(lister: Lister, limit: number, folds: Readonly<Record<string, SummaryFold>>): Promise<RecentSessions> {
  const { store, signer } = lister
  const opened: Candidate[] = [...lister.open].map(([id, session]) => {
    const summary = summarizeSession(session, folds)
    return { id, updatedAt: summary.updatedAt, summary }
  })
  const checks = new Map<string, Promise<SessionSummary | undefined>>()
  const learnt = new Map<string, string>()
  const removed: string[] = []
  const checkStored = async ({ id, stored }: Candidate): Promise<SessionSummary | undefined> => {
    const kept = stored!.summary !== undefined ? openKept(signer, id, stored!.summary) : undefined
    if (kept && usable(kept, stored!.version.token, folds)) return fromKept(kept, store.locationOf(id), folds)
    const rebuilt = await rebuildSummary(lister, id, { ...stored!.version, at: stored!.at }, folds)
    if (!rebuilt) {
      removed.push(id)
      return undefined
    }
    learnt.set(id, rebuilt.kept.text)
    return rebuilt.summary
  }
  let result: RecentSessions
  for (let window = limit + opened.length; ; window *= 4) {
    const at = Date.now()
    const page = await store.newest!(window)
    const rows: Candidate[] = page.sessions
      .filter((row) => !lister.open.has(row.id))
      .map((row) => ({ id: row.id, updatedAt: row.updatedAt, stored: { ...row, at }, checking: checks.get(row.id) }))
    const candidates = merge(rows, [...opened].sort(byRecency))
    const walked = await walk(candidates, limit, (candidate) => {
      const checking = checkStored(candidate)
      checks.set(candidate.id, checking)
      return checking
    })
    // Every row the store has was seen, or enough were found where the rows after the window cannot change them.
    if (page.sessions.length < window || (walked.sessions.length >= limit && !walked.movedLast)) {
      result = { sessions: walked.sessions, total: Math.max(walked.sessions.length, page.total - walked.dropped) }
      break
    }
  }
  if (learnt.size || removed.length) await keep(() => store.writeSummaries?.(learnt, removed) ?? Promise.resolve(), lister)
  return result
}

/** The journal's latest entries (null: removed) and the sessions open here, by id. */
function extraCandidates(lister: Lister, index: LoadedIndex, folds: Readonly<Record<string, SummaryFold>>): Map<string, Candidate | null> {
  const extra = new Map<string, Candidate | null>()
  for (const [id, kept] of index.journal) extra.set(id, kept.entry.removed ? null : { id, updatedAt: kept.entry.summary.updatedAt, kept })
  for (const [id, session] of lister.open) {
    const summary = summarizeSession(session, folds)
    extra.set(id, { id, updatedAt: summary.updatedAt, summary })
  }
  return extra
}

/**
 * The sessions the head of the table names, newest first: its rows (already in order), with the
 * journal's later entries and the sessions open here merged in where their times put them. Unless the
 * table was read whole (`complete`), those that would come after its last row read are left for a
 * larger window (rows not read might come before them).
 */
function candidatesOf(lister: Lister, rows: readonly IndexRow[], extras: ReadonlyMap<string, Candidate | null>, complete: boolean): Candidate[] {
  const extra = new Map(extras)
  const table: Candidate[] = []
  for (const row of rows) {
    const other = extra.get(row.id)
    // A journal entry made before the table's own entry (a whole listing read the log later) gives way.
    if (other === undefined || (other?.kept && !lister.open.has(row.id) && row.madeAt > (other.kept.entry.madeAt ?? 0))) {
      extra.delete(row.id)
      table.push({ id: row.id, updatedAt: row.updatedAt, row })
    }
  }
  const last = rows[rows.length - 1]
  const added = [...extra.values()].filter((c): c is Candidate => c !== null && (complete || !last || byRecency(c, last) <= 0)).sort(byRecency)
  // Each window starts from fresh candidates: a walk moves and marks the ones it is given.
  return merge(table, added.map((c) => ({ ...c, checking: undefined })))
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
