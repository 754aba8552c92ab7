// The history's kept token estimate against a count from scratch, after random sequences of messages added,
// answers replaced (a partial answer and its retry), tool outputs elided and histories compacted.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { ContextCompactionData, SessionRecord } from '@goalkeeper/session'
import type { ModelMessage } from '@goalkeeper/model'
import { History, replayHistory } from '../src/history.ts'
import { estimateMessages } from '../src/estimate.ts'
import { withHistory, messagesEstimate } from '../src/request.ts'

const SEED = Number(process.env.GK_FC_SEED ?? 20261201)
const RUNS = Number(process.env.GK_FC_RUNS ?? 200)

type Op =
  | { kind: 'user'; text: string }
  | { kind: 'answer'; text: string; calls: number; partial: boolean }
  | { kind: 'result'; ok: boolean; content: string }
  | { kind: 'compact'; upto: number; keep: number[]; summary: string; elide: number[] }
  | { kind: 'noise' }

const text = fc.string({ maxLength: 60 })
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('user' as const), text }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('answer' as const), text, calls: fc.nat(2), partial: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('result' as const), ok: fc.boolean(), content: text }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('compact' as const), upto: fc.nat(), keep: fc.array(fc.nat(), { maxLength: 4 }),
      summary: fc.oneof(fc.constant(''), text), elide: fc.array(fc.nat(), { maxLength: 6 }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'noise' as const }) },
)

/** A session log built from `ops`, in the shapes the loop writes; compactions name seqs that exist. */
function play(ops: Op[], check: (records: SessionRecord[]) => void) {
  const records: SessionRecord[] = []
  const append = (type: string, data: unknown) => records.push({ seq: records.length, at: 0, type, data })
  let calls = 0
  const open: string[] = []
  for (const step of ops) {
    switch (step.kind) {
      case 'user':
        append('user/message', { id: `u${records.length}`, content: [{ type: 'text', text: step.text }], source: { kind: 'human' } })
        break
      case 'answer': {
        const toolCalls = Array.from({ length: step.calls }, () => ({ id: `c${++calls}`, name: `tool${calls % 3}`, arguments: `{"n":${calls}}` }))
        append('assistant/message', { turn: 1, step: 1, text: step.text, toolCalls, ...(step.partial ? { partial: true } : {}) })
        if (!step.partial) for (const call of toolCalls) { append('tool/call', { turn: 1, step: 1, callId: call.id, name: call.name, arguments: call.arguments }); open.push(call.id) }
        break
      }
      case 'result': {
        const callId = open.shift() ?? `orphan${records.length}`
        append('tool/result', { turn: 1, step: 1, callId, ok: step.ok, content: step.content, ...(step.ok ? {} : { error: { code: 'FAILED', message: 'it failed' } }) })
        break
      }
      case 'compact': {
        const seqs = records.map((record) => record.seq)
        if (!seqs.length) break
        const pick = (n: number) => seqs[n % seqs.length]
        const data: ContextCompactionData = {
          turn: 1, step: 1, reason: 'threshold', method: step.summary ? 'summary' : 'fallback', uptoSeq: pick(step.upto),
          keptSeqs: step.keep.map(pick), summary: step.summary, elided: step.elide.map(pick), replaced: 0, tokensBefore: 0, tokensAfter: 0,
        }
        append('context/compacted', data)
        break
      }
      case 'noise':
        append('step/start', { turn: 1, step: 1 })
        break
    }
    check(records)
  }
}

describe('the kept token estimate of the history', () => {
  it(`equals an estimate from scratch after any sequence of additions, replacements and compactions (fast-check seed ${SEED}, ${RUNS} runs)`, () => {
    console.log(`randomized history estimate test: seed ${SEED}, runs ${RUNS} (set GK_FC_SEED / GK_FC_RUNS to change)`)
    fc.assert(fc.property(fc.array(op, { maxLength: 40 }), fc.array(fc.boolean(), { maxLength: 40 }), (ops, reads) => {
      const session = { records: [] as SessionRecord[] }
      const history = new History(session)
      const taken: { snapshot: ReturnType<History['snapshot']>; messages: ModelMessage[] }[] = []
      let index = 0
      play(ops, (records) => {
        session.records = records
        // The history is read at some steps only, as the loop reads it once per model call.
        if (!reads[index++ % Math.max(1, reads.length)]) return
        const snapshot = history.snapshot()
        const messages = snapshot.messages()
        expect(messages).toEqual(replayHistory(records))
        expect(snapshot.tokens).toBe(estimateMessages(messages))
        expect(history.tokens()).toBe(estimateMessages(messages))
        expect(history.estimate(messages)).toBe(estimateMessages(messages))
        const request = withHistory({ system: 's', tools: [] }, snapshot)
        expect(messagesEstimate(request, history)).toBe(estimateMessages(messages))
        taken.push({ snapshot, messages })
      })
      // Every snapshot still reads the history it was taken from, whatever came after it.
      for (const { snapshot, messages } of taken) {
        expect(snapshot.messages()).toEqual(messages)
        expect(snapshot.length).toBe(messages.length)
      }
      expect(history.tokens()).toBe(estimateMessages(replayHistory(session.records)))
    }), { seed: SEED, numRuns: RUNS })
  })

  it('a request keeps the messages it was built with; read or given new ones, they are estimated as they are', () => {
    const session = { records: [] as SessionRecord[] }
    const history = new History(session)
    session.records.push({ seq: 0, at: 0, type: 'user/message', data: { id: 'a', content: [{ type: 'text', text: 'x'.repeat(40) }], source: { kind: 'human' } } })
    const request = withHistory({ system: 's', tools: [] }, history.snapshot())
    session.records.push({ seq: 1, at: 0, type: 'user/message', data: { id: 'b', content: [{ type: 'text', text: 'y'.repeat(400) }], source: { kind: 'human' } } })
    expect(history.current()).toHaveLength(2)
    expect(messagesEstimate(request, history)).toBe(14)
    expect(request.messages).toHaveLength(1)
    // Read once, it is a plain property: the same array each time, and a change to it is counted.
    expect(request.messages).toBe(request.messages)
    expect({ ...request }.messages).toBe(request.messages)
    expect(JSON.parse(JSON.stringify(request)).messages).toEqual(request.messages)
    expect(messagesEstimate(request, history)).toBe(14)
    request.messages.push(...history.current().slice(1))
    expect(messagesEstimate(request, history)).toBe(14 + 104)
    const replaced: ModelMessage[] = [{ role: 'user', content: [{ type: 'text', text: 'z'.repeat(4000) }] }]
    request.messages = replaced
    expect(request.messages).toBe(replaced)
    expect(messagesEstimate(request, history)).toBe(1004)
  })
})
