import { describe, expect } from 'vitest'
import { checkpointPart, type SessionRecord } from '@goalkeeper/session'
import { foldSession } from '../src/fold.ts'
import { History } from '../src/history.ts'
import { it } from './helpers.ts'

const fromCheckpoint = (records: readonly SessionRecord[], at: number) => records.slice(records.findIndex((record) => record.seq === at))
const comparable = (fold: ReturnType<typeof foldSession>) => ({ ...fold, knownIds: [...fold.knownIds].sort() })

describe('checkpoints of the agent loop', () => {
  it('hold the inputs queued during a turn, the next turn and the ids used: a fold from one equals the whole fold', async ({ h }) => {
    const agent = await h.createAgent()
    let checkpoint: SessionRecord | undefined
    h.root.on('agent/turn-start', (_agent, turn) => {
      if (turn === 1) agent.send({ id: 'second', content: 'queued while the first runs' })
    })
    // Between the turns, with the second message still queued.
    h.root.on('agent/turn-end', (_agent, turn) => {
      if (turn === 1) checkpoint = h.root.sessions.checkpoint(agent.session, 'interval')
    })
    h.scripted.push({ text: 'first' }, { text: 'second answer' })
    agent.send({ id: 'first', content: 'the first' })
    await agent.whenIdle()
    const records = h.records(agent)
    expect(checkpointPart(checkpoint!, 'agent-loop')).toMatchObject({ inputs: { nextTurn: 2, pending: [{ id: 'second' }] } })
    const upTo = records.slice(0, records.indexOf(records.find((record) => record.seq === checkpoint!.seq)!) + 1)
    expect(comparable(foldSession([checkpoint!]))).toEqual(comparable(foldSession(upTo)))
    expect(comparable(foldSession(fromCheckpoint(records, checkpoint!.seq)))).toEqual(comparable(foldSession(records)))
    // The history too: the same messages, and the same estimate.
    const tail = new History({ records: fromCheckpoint(records, checkpoint!.seq), firstSeq: checkpoint!.seq })
    const whole = new History({ records })
    expect(JSON.stringify(tail.current())).toBe(JSON.stringify(whole.current()))
    expect(tail.tokens()).toBe(whole.tokens())
  })
})
