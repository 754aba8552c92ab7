import type { Signer } from './integrity.ts'
import type { Logger } from 'cordis'
import type { SessionImpl } from './session.ts'
import type { SessionStore } from './store.ts'
import { summarizeRecords, summarizeStream } from './summary.ts'
import type { SessionSummary } from './types.ts'

const CONCURRENCY = 4

/**
 * Summaries of every session in the store, newest activity first. Sessions open in this process are
 * summarised from memory (they may hold records not yet written); a log that cannot be read is
 * listed with its problem (file:line and reason), never hidden, and never hides the others; so is a
 * tampered one (its signatures are checked while it streams), with what it holds.
 */
export async function listSessions(store: SessionStore, open: ReadonlyMap<string, SessionImpl>, logger: Logger, signer: Signer): Promise<SessionSummary[]> {
  if (store.summaries) return fromStore(await store.summaries(), open)
  const ids = await store.list()
  const summaries: SessionSummary[] = []
  const summarize = async (id: string) => {
    const session = open.get(id)
    if (session) return summaries.push(summarizeRecords(id, session.file, session.records, session.integrity))
    try {
      summaries.push(await summarizeStream(id, store.locationOf(id), store.stream(id), signer))
    } catch (error) {
      const { code, line } = error as { code?: string; line?: number }
      // Removed between listing and reading: not worth a mention.
      if (code === 'SESSION_NOT_FOUND') return
      logger.debug('session %s cannot be read: %s', id, (error as Error).message)
      const reason = (error as Error).message
      summaries.push({ id, file: store.locationOf(id), createdAt: 0, updatedAt: 0, records: 0, cwd: '', problem: { code: code ?? 'EIO', ...(line !== undefined && { line }), reason } })
    }
  }
  let next = 0
  const worker = async () => {
    while (next < ids.length) await summarize(ids[next++])
  }
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, ids.length) }, worker))
  return newestFirst(summaries)
}

/** A store's own summaries; sessions open here are summarised from memory (they may hold unwritten records). */
function fromStore(stored: SessionSummary[], open: ReadonlyMap<string, SessionImpl>): SessionSummary[] {
  return newestFirst(stored.map((summary) => {
    const session = open.get(summary.id)
    return session ? summarizeRecords(summary.id, session.file, session.records, session.integrity) : summary
  }))
}

function newestFirst(summaries: SessionSummary[]): SessionSummary[] {
  return summaries.sort((a, b) => b.updatedAt - a.updatedAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
}
