import type { Logger } from 'cordis'
import type { Signer } from './integrity.ts'
import { appendEntries } from './kept-index.ts'
import type { SessionImpl } from './session.ts'
import type { SessionStore } from './store.ts'
import { keptSummary, summarizeSession } from './summary.ts'
import type { SummaryFold } from './types.ts'

/** A session being written updates its entry at most this often between its creation and its close. */
export const KEEP_EVERY_MS = 10_000

/**
 * The writers' side of the index of kept summaries: a session's entry is appended to the journal (or,
 * in a store without an index, kept with its others: `writeSummaries`) at
 * its first write after the header, after later writes (at most every `KEEP_EVERY_MS`) and when it is
 * closed, so a listing finds every session written here, in order, without reading any log. Each entry is summarised from
 * the records known durable, then bound to the log's version read after them: a version newer than
 * the summary only makes the entry stale (read again when shown), never wrong.
 */
export class SummaryKeeper {
  private folds = new Map<string, SummaryFold>()
  private timers = new Map<SessionImpl, NodeJS.Timeout>()
  private lastKept = new Map<SessionImpl, number>()
  private keeping = new Map<SessionImpl, Promise<void>>()

  constructor(private store: SessionStore, private logger: Logger, private signer: () => Signer | undefined) {}

  /** Folds whose results every entry carries from now on (the listing asks for them); returns a disposer. */
  addFolds(folds: Readonly<Record<string, SummaryFold>>): () => void {
    for (const [name, fold] of Object.entries(folds)) this.folds.set(name, fold)
    return () => {
      for (const [name, fold] of Object.entries(folds)) if (this.folds.get(name) === fold) this.folds.delete(name)
    }
  }

  /** The folds kept now: a checkpoint carries the state of those that can resume. */
  keptFolds(): Iterable<SummaryFold> {
    return this.folds.values()
  }

  /** Keeps the entry of `session` as its records up to `durableSeq` say. */
  async keep(session: SessionImpl, durableSeq = session.nextSeq - 1): Promise<void> {
    const index = this.store.indexes?.()[0]
    const store = this.store
    // A store without an index (a database) keeps the entry with its others, replacing the one before.
    const write = index
      ? (id: string, text: string) => appendEntries(index, [[id, text]])
      : store.writeSummaries && ((id: string, text: string) => store.writeSummaries!(new Map([[id, text]]), []))
    const signer = this.signer()
    if (!write || !signer) return
    const madeAt = Date.now()
    this.lastKept.set(session, madeAt)
    const folds = Object.fromEntries(this.folds)
    const summary = summarizeSession(session, folds, durableSeq)
    // One after the other per session: an entry replaced in place (a database row) must end as the last one made.
    const done = (this.keeping.get(session) ?? Promise.resolve()).then(async () => {
      try {
        const { token } = await this.store.version(session.id)
        await write(session.id, keptSummary(signer, session.id, token, summary, folds, madeAt))
      } catch (error) {
        this.logger.debug('%s: its summary cannot be kept (the next listing reads its log): %s', session.id, (error as Error).message)
      }
    })
    this.keeping.set(session, done)
    await done
    if (this.keeping.get(session) === done) this.keeping.delete(session)
  }

  /** After a write: keeps the entry now, or once `KEEP_EVERY_MS` passed since the last one. */
  written(session: SessionImpl, durableSeq: number) {
    if (this.timers.has(session)) return
    const wait = (this.lastKept.get(session) ?? 0) + KEEP_EVERY_MS - Date.now()
    const timer = setTimeout(() => {
      this.timers.delete(session)
      if (!session.closed) void this.keep(session, Math.max(durableSeq, session.writer?.durableSeq ?? durableSeq))
    }, Math.max(0, wait))
    timer.unref()
    this.timers.set(session, timer)
  }

  /**
   * At close, after the last flush: the entry as the log ends. A session that was never written to
   * after its header has none (`discard` removes such sessions, leaving nothing behind).
   */
  async closed(session: SessionImpl): Promise<void> {
    clearTimeout(this.timers.get(session))
    this.timers.delete(session)
    if (this.lastKept.has(session) || session.nextSeq > 1) await this.keep(session, session.writer?.durableSeq)
    this.lastKept.delete(session)
  }
}
