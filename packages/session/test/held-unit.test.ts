import { describe, expect, it } from 'vitest'
import { nextSeqOf, recordsSince, type SessionRecord } from '@goalkeeper/session'

const records = (first: number, count: number): SessionRecord[] => Array.from({ length: count }, (_, i) => ({ seq: first + i, at: 0, type: 'test/item', data: {} }))

describe('positions over the records a session holds', () => {
  it('are seqs: the records from a seq, however many came before the first held', () => {
    const session = { firstSeq: 40, records: records(40, 5) }
    expect(nextSeqOf(session)).toBe(45)
    expect(recordsSince(session, 43).map((record) => record.seq)).toEqual([43, 44])
    expect(recordsSince(session, 45)).toEqual([])
    // Records let go of before the reader got to them are skipped: it gets what is held.
    expect(recordsSince(session, 10)).toBe(session.records)
    expect(nextSeqOf({ firstSeq: 0, records: [] })).toBe(0)
  })
})
