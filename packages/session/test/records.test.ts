import { describe, expect, expectTypeOf, it } from 'vitest'
import {
  isRecordOf, lastAssistantText, recordsOfTurn, turnOf, turnOutcome,
  type Session, type SessionRecord, type TurnOutcome, type UserMessage,
} from '@goalkeeper/session'
import { appsPerTest, human, tempDir } from './helpers.ts'

const launch = appsPerTest()

const assistant = (turn: number, step: number, text: string) => ({ turn, step, text, toolCalls: [] })

/**
 * Turn 1 answers m1 in two steps (a steered hint joins step 2); m2 is rejected; turn 2 answers m3 and ends
 * aborted after a blank answer; turn 3 (m4) is still open.
 */
async function conversation(): Promise<Session> {
  const dir = await tempDir()
  const { sessions } = await launch(dir)
  const session = await sessions.create({ cwd: dir })
  const append = (type: string, data: unknown) => session.append(type, data)
  append('input/queued', { message: human('m1', 'first') })
  append('input/queued', { message: human('m2', 'dropped') })
  append('turn/start', { turn: 1 })
  append('user/message', human('m1', 'first'))
  append('input/rejected', { messageId: 'm2', reason: 'dropped' })
  append('step/start', { turn: 1, step: 1 })
  append('assistant/message', assistant(1, 1, '  Looking.  '))
  append('step/end', { turn: 1, step: 1 })
  append('step/start', { turn: 1, step: 2 })
  append('user/message', { id: 'hint', content: [{ type: 'text', text: 'try again' }], source: { kind: 'plugin', name: 'guard' } })
  append('assistant/message', assistant(1, 2, 'Done.'))
  append('step/end', { turn: 1, step: 2 })
  append('plugin/note', { turn: 1, text: 'not an assistant message' })
  append('turn/end', { turn: 1, outcome: { kind: 'completed' } })
  append('input/queued', { message: human('m3', 'second') })
  append('turn/start', { turn: 2 })
  append('user/message', human('m3', 'second'))
  append('assistant/message', assistant(2, 1, '   '))
  append('turn/end', { turn: 2, outcome: { kind: 'aborted', cause: 'user' } })
  append('turn/start', { turn: 3 })
  append('user/message', human('m4', 'third'))
  append('assistant/message', assistant(3, 1, 'Working on it'))
  return session
}

describe('typed access to the session log', () => {
  it('isRecordOf narrows by type, to one type or several, and leaves other types out', async () => {
    const session = await conversation()
    const records: readonly SessionRecord[] = session.records
    const ends = records.filter((record) => isRecordOf(record, 'turn/end'))
    expect(ends.map((record) => record.data.outcome.kind)).toEqual(['completed', 'aborted'])
    const settled = records.filter((record) => isRecordOf(record, 'input/rejected', 'input/cancelled')).map((record) => record.data.messageId)
    expect(settled).toEqual(['m2'])
    expect(records.filter((record) => isRecordOf(record, 'user/message')).map((record) => record.data.id)).toEqual(['m1', 'hint', 'm3', 'm4'])
    expect(records.some((record) => isRecordOf(record, 'assistant/message') && record.type !== 'assistant/message')).toBe(false)

    const record = records[1]
    if (isRecordOf(record, 'input/queued')) expectTypeOf(record.data.message).toEqualTypeOf<UserMessage>()
    if (isRecordOf(record, 'turn/end')) expectTypeOf(record.data.outcome).toEqualTypeOf<TurnOutcome>()
    // Anything with a type and data narrows, not only a record with seq and at.
    const planned: { type: string; data: unknown } = { type: 'step/end', data: { turn: 1, step: 1 } }
    expect(isRecordOf(planned, 'step/end') && planned.data.step).toBe(1)
  })

  it('turnOf finds the turn that took a message, steered ones included, and nothing for a message no turn took', async () => {
    const { records } = await conversation()
    expect(turnOf(records, 'm1')).toBe(1)
    expect(turnOf(records, 'hint')).toBe(1)
    expect(turnOf(records, 'm3')).toBe(2)
    expect(turnOf(records, 'm4')).toBe(3)
    expect(turnOf(records, 'm2')).toBeUndefined()
    expect(turnOf(records, 'unknown')).toBeUndefined()
  })

  it('recordsOfTurn gives a turn from its start to its end, or to the end of the log while it runs', async () => {
    const { records } = await conversation()
    const first = recordsOfTurn(records, 1)
    expect(first[0]).toMatchObject({ type: 'turn/start', data: { turn: 1 } })
    expect(first.at(-1)).toMatchObject({ type: 'turn/end', data: { turn: 1 } })
    expect(first).toHaveLength(12)
    expect(recordsOfTurn(records, 3).map((record) => record.type)).toEqual(['turn/start', 'user/message', 'assistant/message'])
    expect(recordsOfTurn(records, 4)).toEqual([])
    // A turn that never ended (a log cut without repair) stops where the next turn starts.
    const cut = records.filter((record) => !(isRecordOf(record, 'turn/end') && record.data.turn === 1))
    expect(recordsOfTurn(cut, 1).at(-1)).toMatchObject({ type: 'input/queued' })
  })

  it('lastAssistantText gives the last non-blank answer, trimmed, of a turn or of the whole log', async () => {
    const { records } = await conversation()
    expect(lastAssistantText(records, 1)).toBe('Done.')
    expect(lastAssistantText(records, 2)).toBeUndefined()
    expect(lastAssistantText(records, 3)).toBe('Working on it')
    expect(lastAssistantText(records)).toBe('Working on it')
    expect(lastAssistantText(recordsOfTurn(records, 2))).toBeUndefined()
    expect(lastAssistantText(records.slice(0, 8))).toBe('Looking.')
  })

  it('turnOutcome tells how a turn ended, or the last turn that ended, and nothing for an open turn', async () => {
    const { records } = await conversation()
    expect(turnOutcome(records, 1)).toEqual({ kind: 'completed' })
    expect(turnOutcome(records, 2)).toEqual({ kind: 'aborted', cause: 'user' })
    expect(turnOutcome(records, 3)).toBeUndefined()
    expect(turnOutcome(records)).toEqual({ kind: 'aborted', cause: 'user' })
    expect(turnOutcome(records.slice(0, 3))).toBeUndefined()
  })
})
