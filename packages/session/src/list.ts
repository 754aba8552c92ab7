import { readdir } from 'node:fs/promises'
import path from 'node:path'
import type { Logger } from 'cordis'
import { isSessionId } from './ids.ts'
import type { SessionImpl } from './session.ts'
import { summarizeFile, summarizeRecords } from './summary.ts'
import type { SessionSummary } from './types.ts'

const CONCURRENCY = 4

/**
 * Summaries of every session file in `dir`, newest activity first. Sessions open in this process are
 * summarised from memory (they may hold records not yet written); a file that cannot be read is
 * skipped with a warning so one bad file does not hide the others.
 */
export async function listSessions(dir: string, open: ReadonlyMap<string, SessionImpl>, logger: Logger): Promise<SessionSummary[]> {
  let names: string[]
  try {
    names = await readdir(dir)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
  const ids = names.filter((name) => name.endsWith('.jsonl')).map((name) => name.slice(0, -'.jsonl'.length)).filter(isSessionId)
  const summaries: SessionSummary[] = []
  const summarize = async (id: string) => {
    const session = open.get(id)
    if (session) return summaries.push(summarizeRecords(id, session.file, session.records))
    const file = path.join(dir, `${id}.jsonl`)
    try {
      summaries.push(await summarizeFile(id, file))
    } catch (error) {
      // Removed between readdir and read: not worth a warning.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return
      logger.warn('skipping session %s: %s', id, (error as Error).message)
    }
  }
  let next = 0
  const worker = async () => {
    while (next < ids.length) await summarize(ids[next++])
  }
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, ids.length) }, worker))
  return summaries.sort((a, b) => b.updatedAt - a.updatedAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
}
