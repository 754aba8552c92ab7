// settleRound on its own, no harness: the rows settlement.test.ts leaves to the end-to-end runs, and every
// text the table writes (block messages, why-lines) as file snapshots, one per row, in
// __snapshots__/settlement-unit.test.ts.snap.
import { describe, expect, it } from 'vitest'
import { DRIVER_BLOCK_CODES, settleRound, STEP_LIMIT_CODE, type RoundEnd } from '../src/index.ts'

const turn = (outcome: unknown): RoundEnd => ({ kind: 'turn', outcome: outcome as never })
const at = { round: 7 }
const moved = { round: 7, moved: 'the goal was edited to revision 4' }

/** One end per row of the table, named as the snapshot names it. */
const ends: Record<string, RoundEnd> = {
  'completed': turn({ kind: 'completed' }),
  'aborted': turn({ kind: 'aborted', cause: 'user' }),
  'preempted': turn({ kind: 'preempted', cause: 'human message m3 arrived' }),
  'preempted, no cause': turn({ kind: 'preempted' }),
  'error REFUSED': turn({ kind: 'error', code: 'REFUSED', message: 'I cannot help with that' }),
  'error MAX_STEPS': turn({ kind: 'error', code: STEP_LIMIT_CODE, message: 'used 64 steps' }),
  'error RATE_LIMIT': turn({ kind: 'error', code: 'RATE_LIMIT', message: 'try again in 20s' }),
  'error QUOTA': turn({ kind: 'error', code: 'QUOTA', message: '' }),
  'error CONTEXT_OVERFLOW': turn({ kind: 'error', code: 'CONTEXT_OVERFLOW', message: 'prompt is 140k tokens' }),
  'error, other code': turn({ kind: 'error', code: 'SERVER', message: 'bad gateway' }),
  'error, no code': turn({ kind: 'error' }),
  'max-tokens': turn({ kind: 'max-tokens' }),
  'disposed': turn({ kind: 'disposed' }),
  'interrupted': turn({ kind: 'interrupted' }),
  'unknown kind': turn({ kind: 'teleported' }),
  'no kind': turn({ cause: 'x' }),
  'no outcome': turn(undefined),
  'cancelled': { kind: 'cancelled', reason: 'user' },
  'refused': { kind: 'refused', why: 'an admission hook dropped it' },
  'send-failed': { kind: 'send-failed' },
}

describe('settleRound, unit', () => {
  it('every row with the goal still current', () => {
    for (const [name, end] of Object.entries(ends)) expect(settleRound(end, at)).toMatchSnapshot(name)
  })

  it('every row with a goal that moved during the round', () => {
    for (const [name, end] of Object.entries(ends)) expect(settleRound(end, moved)).toMatchSnapshot(name)
  })

  it('a moved goal stands against every row except the ones that only disarm or stop automatic work', () => {
    const kinds = Object.fromEntries(Object.entries(ends).map(([name, end]) => [name, settleRound(end, moved).kind]))
    const notStanding = Object.entries(kinds).filter(([, kind]) => kind !== 'stand').map(([name, kind]) => `${name}: ${kind}`)
    expect(notStanding).toEqual(['disposed: disarm', 'interrupted: disarm', 'cancelled: disarm'])
  })

  it('an error without a message, code or string cause still names what it has', () => {
    expect(settleRound(ends['error QUOTA'], at)).toMatchObject({ reason: { message: expect.stringContaining('(QUOTA: no message)') } })
    expect(settleRound(ends['error, no code'], at)).toMatchObject({ reason: { code: DRIVER_BLOCK_CODES.turnError, message: expect.stringContaining('(undefined: no message)') } })
    expect(settleRound(ends['preempted, no cause'], at)).toMatchObject({ why: expect.stringContaining('(no cause recorded)') })
    expect(settleRound(ends['unknown kind'], at)).toMatchObject({ reason: { message: expect.stringContaining('("teleported")') } })
    expect(settleRound(ends['no kind'], at)).toMatchObject({ reason: { message: expect.stringContaining('(none recorded)') } })
  })

  it('is a function of its inputs: the same end settles the same way every time', () => {
    for (const end of Object.values(ends)) expect(settleRound(end, at)).toEqual(settleRound(structuredClone(end), { ...at }))
  })
})
