import type { SessionRecord } from './records.ts'
import type { Session } from './types.ts'

/** What a position over a session's records needs: the records it holds and the seq of the first. */
export type HeldRecords = Pick<Session, 'records' | 'firstSeq'>

/** Seq of the record after the last one `session` holds. */
export const nextSeqOf = (session: HeldRecords): number => session.firstSeq + session.records.length

/**
 * The records `session` holds from seq `seq` on. A live session lets go of what precedes its last
 * checkpoint, so a reader keeps its place as a seq, never as a position in `records`; what was let go of
 * before the reader got to it is skipped.
 */
export function recordsSince(session: HeldRecords, seq: number): readonly SessionRecord[] {
  const from = seq - session.firstSeq
  return from <= 0 ? session.records : session.records.slice(from)
}
