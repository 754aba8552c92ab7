// The one-line compaction note in its forms, as file snapshots: a change of wording is a one-line diff in
// __snapshots__/compaction-text.test.ts.snap.
import { describe, expect, it } from 'vitest'
import { compactionLine, type ContextCompactionData } from '@goalkeeper/session'

const base: ContextCompactionData = {
  turn: 4, step: 2, reason: 'threshold', method: 'summary', uptoSeq: 40, keptSeqs: [41, 42], summary: 'so far', elided: [],
  replaced: 18, tokensBefore: 13_310, tokensAfter: 5_600, contextWindow: 16_000,
}

describe('compactionLine', () => {
  it('threshold, overflow, request; messages, tool outputs or nothing; with and without a window', () => {
    expect(compactionLine(base)).toMatchSnapshot('threshold summary')
    expect(compactionLine({ ...base, reason: 'overflow', method: 'fallback', elided: [12, 15], replaced: 1 })).toMatchSnapshot('overflow fallback')
    expect(compactionLine({ ...base, reason: 'request', method: 'policy', replaced: 0, elided: [3], tokensBefore: 900, tokensAfter: 850, contextWindow: undefined })).toMatchSnapshot('request, tool output only, no window')
    expect(compactionLine({ ...base, replaced: 0, elided: [] })).toMatchSnapshot('nothing')
  })
})
