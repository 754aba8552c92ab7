import type {} from '@goalkeeper/fleet'
import { isRecord } from '@goalkeeper/kit'
import { isRecordOf, type SessionRecord, type SummaryFold, type SummaryFoldRun } from '@goalkeeper/session'

/**
 * The fleet worker that last claimed a session (its last `fleet/claim` record), as a listing fold: the
 * listing keeps it in each log's summary, so `sessions` opens no log for it. Kept here rather than in the
 * fleet package, which loads pg-boss: listing sessions must not.
 */
export const workerSummaryFold: SummaryFold<string | null> = {
  version: 'fleet-worker/1',
  start: () => workerRun(null),
  // A checkpoint carries the worker, so a session held from one still names it.
  resume: (state) => workerRun(typeof state === 'string' ? state : null),
}

function workerRun(from: string | null): SummaryFoldRun<string | null> {
  let worker = from
  return {
    add(record: SessionRecord) {
      if (!isRecordOf(record, 'fleet/claim')) return
      // A summary survives any log: the data is read as it is, not as declared.
      const claimed: unknown = isRecord(record.data) ? record.data.worker : undefined
      worker = typeof claimed === 'string' ? claimed : null
    },
    result: () => worker,
    state: () => worker,
  }
}
