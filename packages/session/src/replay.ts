import type { CheckpointEntry, SealCheck, Signer } from './integrity.ts'
import { type LogChunk, type LogEnd, LogReader, type ReadStart } from './log-reader.ts'
import type { SessionRecord } from './records.ts'
import { type PlannedRecord, RepairPlanner } from './repair.ts'
import type { Integrity } from './types.ts'

export interface LoadedFile extends LogEnd {
  records: SessionRecord[]
  /** What the macs say (always `unsigned` without a signer). */
  integrity: Integrity
  /** The mac the next record chains from. */
  lastMac: string
  /** The records that close what the log left open (crash repair), planned while it streamed. */
  repairs: PlannedRecord[]
  /** The last checkpoint read, as the checkpoint index keeps it. */
  lastCheckpoint?: CheckpointEntry
}

/**
 * Replays a session log as it streams: each line is parsed, checked, verified and folded (records,
 * repair plan) as it arrives, so the log is never held whole, as bytes or as text; only the records
 * are, since a `Session` keeps them.
 */
export async function replay(chunks: AsyncIterable<LogChunk>, file: string, id: string, signer?: Signer, seal?: SealCheck, start?: ReadStart): Promise<LoadedFile> {
  const records: SessionRecord[] = []
  const planner = new RepairPlanner()
  const reader = new LogReader(file, id, signer, (record) => {
    records.push(record)
    planner.add(record)
  }, seal, start)
  for await (const chunk of chunks) {
    if (Buffer.isBuffer(chunk)) reader.push(chunk)
    else reader.pushLines(chunk)
  }
  const end = reader.finish()
  return { records, ...end, integrity: reader.chain.integrity, lastMac: reader.chain.next(), repairs: planner.plan(), lastCheckpoint: reader.lastCheckpoint }
}
