import type { Logger } from 'cordis'
import { readSealCheck, sealCheckOf, type Signer } from './integrity.ts'
import { appendEntries, compactIndex, type LoadedIndex, later, loadIndex } from './kept-index.ts'
import type { SessionImpl } from './session.ts'
import type { LogSnapshot, SessionStore } from './store.ts'
import { keptEntry, type KeptSummary, openKept, summarizeSession, summarizeStream } from './summary.ts'
import { byRecency, type Kept } from './summary-index.ts'
import type { ListOptions, SessionSummary, SummaryFold } from './types.ts'

/**
 * Logs checked at once against their kept summary, each read from its log right away when its summary
 * must be rebuilt: the wait for each `stat`, open and read dominates (on a loaded machine, more so),
 * and each log is read in chunks of at most 1 MiB, so 16 hold at most 16 MiB.
 */
const CONCURRENCY = 16

/**
 * Logs up to this size are read whole in one go with their version and seal (`SessionStore.snapshot`)
 * when their summary must be built: a first listing of many small logs is then bound by reading, not by
 * waiting for each of the nine calls that `version`, `readSeal` and `stream` make apart.
 */
const SNAPSHOT_BYTES = 1 << 20

/** What a listing works with: the store, the sessions open in this process, the key. */
export interface Lister {
  store: SessionStore
  open: ReadonlyMap<string, SessionImpl>
  logger: Logger
  signer: Signer
}

/** A log's version, and when it was read: what a summary read from the log then is as of. */
type Version = { size: number; token: string; at: number }

/** The log's version, stamped with the time before it was read. */
export async function versionOf(lister: Lister, id: string): Promise<Version> {
  const at = Date.now()
  return { ...(await lister.store.version(id)), at }
}

/**
 * Summaries of every session in the store, newest activity first. A log is read only when the summary
 * kept for it is missing, unsigned, made for another version of the log (any write, cut or
 * replacement changes it) or lacks a fold asked for; otherwise listing costs a `version` (a stat)
 * per log. Sessions open in this process are summarised from memory (they may hold records not yet
 * written); a log that cannot be read is listed with its problem (file:line and reason), never
 * hidden, and never hides the others; so is a tampered one (its signatures are checked while it
 * streams), with what it holds. With an index, what was read is folded into it (compacted).
 */
export async function listSessions(lister: Lister, options: ListOptions = {}): Promise<SessionSummary[]> {
  const { store } = lister
  const folds = options.folds ?? {}
  const everywhere = !!options.everywhere
  const startedAt = Date.now()
  const [ids, { kept, index }] = await Promise.all([store.list({ everywhere }), keptEntries(lister, everywhere)])
  const summaries: SessionSummary[] = []
  const fresh = new Map<string, Kept>()
  const stale: string[] = []
  const check = async (id: string) => {
    const session = lister.open.get(id)
    if (session) return summaries.push(summarizeSession(session, folds))
    const entry = kept.get(id)
    let version: Version
    let snapshot: Snapshot | null | undefined
    try {
      // Nothing kept for it (a first listing): its summary is built in any case, from a snapshot when the
      // store takes one. One that fails is left to the usual reads, which report the failure as they do.
      snapshot = entry ? undefined : await snapshotOf(lister, id).catch(() => undefined)
      version = snapshot?.version ?? (await versionOf(lister, id))
    } catch (error) {
      // Removed between listing and reading: not worth a mention.
      if ((error as { code?: string }).code !== 'SESSION_NOT_FOUND') summaries.push(problemSummary(lister, id, error))
      return
    }
    if (entry && usable(entry.entry, version.token, folds)) {
      fresh.set(id, entry)
      return summaries.push(fromKept(entry.entry, store.locationOf(id), folds))
    }
    stale.push(id)
    const rebuilt = await rebuildSummary(lister, id, version, folds, snapshot)
    if (!rebuilt) return
    summaries.push(rebuilt.summary)
    fresh.set(id, rebuilt.kept)
  }
  await pool(ids, CONCURRENCY, check)
  const present = new Set(ids)
  const removed = [...kept.keys()].filter((id) => !present.has(id))
  if (index) {
    // Every log was checked: the index becomes what this listing found (plus what writers added meanwhile).
    if (stale.length || removed.length || index.journalBytes || !index.opened) await keep(() => compactIndex(lister.signer, store.indexes!()[0], fresh, startedAt), lister)
  } else if (everywhere && store.indexes && stale.length) {
    // Other projects' indexes are only read, but what was rebuilt from this project's own logs goes into its
    // journal: without it every later listing of every project would read those logs again.
    await keep(async () => {
      const own = new Set(await store.list())
      await appendEntries(store.indexes!()[0], stale.flatMap((id) => (own.has(id) && fresh.has(id) ? [[id, fresh.get(id)!.text] as [string, string]] : [])))
    }, lister)
  } else if (store.writeSummaries && (stale.length || removed.length)) {
    const texts = new Map(stale.flatMap((id) => (fresh.has(id) ? [[id, fresh.get(id)!.text] as const] : [])))
    await keep(() => store.writeSummaries!(texts, removed), lister)
  }
  return summaries.sort(byRecency)
}

/** The kept entries, by id, of every index read (or of `readSummaries` for a store without one). */
async function keptEntries(lister: Lister, everywhere: boolean): Promise<{ kept: Map<string, Kept>; index?: LoadedIndex }> {
  const { store, signer, logger } = lister
  const kept = new Map<string, Kept>()
  if (!store.indexes) {
    const texts = await store.readSummaries?.({ everywhere }).catch((error: Error) => {
      logger.debug('the kept session summaries cannot be read (they are rebuilt): %s', error.message)
      return undefined
    })
    for (const [id, text] of texts ?? []) {
      const entry = openKept(signer, id, text)
      if (entry) kept.set(id, { entry, text })
    }
    return { kept }
  }
  let own: LoadedIndex | undefined
  for (const indexStore of store.indexes({ everywhere })) {
    const index = await loadIndex(signer, indexStore, { whole: true })
    own ??= index
    try {
      reportIndex(lister, indexStore.location, index)
      for (const [id, entry] of index.entries ?? []) kept.set(id, entry)
      for (const [id, entry] of index.journal) kept.set(id, later(kept.get(id), entry)!)
    } finally {
      await index.close()
    }
  }
  // Another project's index is only read; this listing writes its own.
  return { kept, index: everywhere ? undefined : own }
}

/** Says why an index is not used; it is rebuilt from the logs. */
export function reportIndex(lister: Lister, location: string, index: LoadedIndex) {
  if (index.problem) lister.logger.warn('the index of session summaries %s is not used: %s; the sessions are listed from their logs and the index rebuilt', location, index.problem)
}

/** Whether a kept entry describes this version of the log, with every fold asked for. */
export function usable(entry: KeptSummary, token: string, folds: Readonly<Record<string, SummaryFold>>): boolean {
  return !entry.removed && entry.token === token && covers(entry, folds)
}

/** A small log read whole (`SessionStore.snapshot`), with its version stamped as `versionOf` stamps it. */
type Snapshot = LogSnapshot & { version: Version }

/** The log's snapshot, when the store takes one and the log is small and of one piece. */
async function snapshotOf(lister: Lister, id: string): Promise<Snapshot | null> {
  if (!lister.store.snapshot) return null
  const at = Date.now()
  const snapshot = await lister.store.snapshot(id, SNAPSHOT_BYTES)
  return snapshot ? { ...snapshot, version: { size: snapshot.size, token: snapshot.token, at } } : null
}

async function* once(bytes: Buffer): AsyncIterable<Buffer> {
  if (bytes.length) yield bytes
}

/**
 * The summary of a log read from it (its signatures verified on the way, as `open` does), with the
 * entry to keep for it; undefined when the log was removed meanwhile. A small log is read in one
 * snapshot (`snapshot`, or one taken here; null: the store took none), its version then being the snapshot's.
 */
export async function rebuildSummary(lister: Lister, id: string, version: Version, folds: Readonly<Record<string, SummaryFold>>, snapshot?: Snapshot | null): Promise<{ summary: SessionSummary; kept: Kept } | undefined> {
  const { store, signer } = lister
  const file = store.locationOf(id)
  let summary: SessionSummary
  try {
    snapshot ??= await snapshotOf(lister, id)
    for (let attempt = 1; ; attempt++) {
      if (snapshot) {
        // The store read the seal after taking the size, as below.
        version = snapshot.version
        summary = await summarizeStream(id, file, once(snapshot.bytes), signer, folds, sealCheckOf(signer, id, snapshot.seal))
      } else {
        // The seal is read while the log is: the log is read only up to the size taken before the seal, and a
        // writer seals only what it wrote, so the seal never says less than those bytes hold (more: cut short,
        // read again below).
        const seal = readSealCheck(store, signer, id)
        seal.catch(() => {})
        summary = await summarizeStream(id, file, store.stream(id, { end: version.size }), signer, folds, seal)
      }
      if (summary.problem?.code !== 'SESSION_TRUNCATED' || attempt === 2) break
      // The size was taken before the seal: a log written meanwhile is read again as it is now.
      const now = await versionOf(lister, id)
      if (now.token === version.token) break
      version = now
      snapshot = null
    }
  } catch (error) {
    if ((error as { code?: string }).code === 'SESSION_NOT_FOUND') return undefined
    summary = problemSummary(lister, id, error)
  }
  return { summary, kept: keptEntry(signer, id, version.token, summary, folds, version.at) }
}

/** A log that cannot be read, listed with its problem so that it is never hidden. */
export function problemSummary(lister: Lister, id: string, error: unknown): SessionSummary {
  const { code, line } = error as { code?: string; line?: number }
  lister.logger.debug('%s cannot be read: %s', id, (error as Error).message)
  const reason = (error as Error).message
  return { id, file: lister.store.locationOf(id), createdAt: 0, updatedAt: 0, records: 0, cwd: '', problem: { code: code ?? 'EIO', ...(line !== undefined && { line }), reason } }
}

/** Keeps what a listing learnt; a failure only means the next listing reads those logs again. */
export async function keep(task: () => Promise<unknown>, lister: Lister): Promise<void> {
  await task().catch((error: Error) => lister.logger.debug('the session summaries cannot be kept: %s', error.message))
}

/** Whether a kept summary holds the result of every fold asked for, made by the same version of it. */
function covers(entry: KeptSummary, folds: Readonly<Record<string, SummaryFold>>): boolean {
  for (const [name, fold] of Object.entries(folds)) if (entry.folds?.[name]?.version !== fold.version) return false
  return true
}

export function fromKept(entry: KeptSummary, file: string, folds: Readonly<Record<string, SummaryFold>>): SessionSummary {
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
