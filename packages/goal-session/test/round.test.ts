import { describe, expect, it } from 'vitest'
import { isDeepStrictEqual } from 'node:util'
import { Context } from 'cordis'
import { NEXT, Round, type RoundState, type RoundStep } from '../src/round.ts'

/** The life of a round as README.md draws it, written out arrow by arrow. */
const LEGAL = [
  'sending -> queued', 'sending -> stale', 'sending -> cancelled',
  'queued -> deciding', 'queued -> stale', 'queued -> cancelled', 'queued -> rejected',
  'deciding -> admitted', 'deciding -> stale', 'deciding -> cancelled', 'deciding -> rejected',
  'admitted -> running', 'admitted -> stale', 'admitted -> cancelled', 'admitted -> rejected',
  'running -> ended', 'running -> cancelled',
  'stale -> cancelled', 'stale -> rejected',
  'rejected -> cancelled',
]

const STEPS: RoundStep[] = ['sending', 'queued', 'deciding', 'admitted', 'running', 'ended', 'stale', 'rejected', 'cancelled']

/** A state for each step; `turn` is set where the life carries one. */
function stateOf(step: RoundStep): RoundState {
  switch (step) {
    case 'running': return { kind: 'running', turn: 3 }
    case 'ended': return { kind: 'ended', turn: 3, outcome: { kind: 'completed' } }
    case 'stale': case 'rejected': return { kind: 'dropped', why: step }
    case 'cancelled': return { kind: 'dropped', why: 'cancelled', turn: 3 }
    default: return { kind: step }
  }
}

const logger = new Context().logger('goal-session')

function roundAt(step: RoundStep): Round {
  const round = new Round('m1', { goalId: 'g1', revision: 1, round: 2 }, 5, 'prompt', 'agent-1', logger)
  round.state = stateOf(step)
  return round
}

describe('Round transitions (NEXT)', () => {
  it('names every step of the life and no other', () => {
    expect(Object.keys(NEXT).sort()).toEqual([...STEPS].sort())
  })

  for (const from of STEPS) {
    for (const to of STEPS) {
      const legal = LEGAL.includes(`${from} -> ${to}`)
      it(`${legal ? 'accepts' : 'refuses'} ${from} -> ${to}`, () => {
        const round = roundAt(from)
        expect(round.can(to)).toBe(legal)
        const next = stateOf(to)
        if (legal) {
          round.transition(next, 'test')
          expect(round.state).toBe(next)
        } else {
          const before = round.state
          expect(() => round.transition(next, 'test')).toThrow(`goal round 2 cannot go from ${from} to ${to} (test)`)
          expect(round.state).toBe(before)
        }
      })
    }
  }
})

describe('Round.yieldTo', () => {
  it('records the first human message while admitted, and running inherits it', () => {
    const round = roundAt('admitted')
    expect(round.yieldTo('h1')).toBe(true)
    expect(round.yieldTo('h2')).toBe(false)
    expect(round.state).toEqual({ kind: 'admitted', preemptedBy: 'h1' })
    round.transition({ kind: 'running', turn: 4, preemptedBy: round.preemptedBy }, 'test')
    expect(round.preemptedBy).toBe('h1')
  })

  it('records it while running, and in no other state', () => {
    const running = roundAt('running')
    expect(running.yieldTo('h1')).toBe(true)
    expect(running.state).toEqual({ kind: 'running', turn: 3, preemptedBy: 'h1' })
    for (const step of STEPS.filter((s) => s !== 'admitted' && s !== 'running')) {
      const round = roundAt(step)
      expect(round.yieldTo('h1'), step).toBe(false)
      expect(round.preemptedBy, step).toBeUndefined()
    }
  })
})

describe('Round.isExactly', () => {
  const round = () => new Round('m1', { goalId: 'g1', revision: 1, round: 2 }, 5, 'the prompt', 'agent-1', logger)
  const own = () => {
    const { id, content, source } = round().message()
    return { id: id!, content: content as { type: 'text'; text: string }[], source: source as Record<string, unknown> }
  }
  const asMessage = (value: unknown) => value as Parameters<Round['isExactly']>[0]
  const hidden = (target: object, key: string, value: unknown) => Object.defineProperty(target, key, { value, enumerable: false })

  it('knows its own message, and a copy of it through the log (JSON)', () => {
    expect(round().isExactly(asMessage(own()))).toBe(true)
    expect(round().isExactly(asMessage(JSON.parse(JSON.stringify(own()))))).toBe(true)
    // Key order is not part of the message.
    const { id, content, source } = own()
    expect(round().isExactly(asMessage({ id, source: { round: source.round, revision: source.revision, goalId: source.goalId, kind: 'goal' }, content: [{ text: content[0].text, type: 'text' }] }))).toBe(true)
  })

  it('refuses every alteration of the identity or the content, as the deep comparison does', () => {
    const altered: ((message: ReturnType<typeof own>) => unknown)[] = [
      (m) => ({ ...m, id: 'm2' }),
      (m) => ({ ...m, source: { ...m.source, round: 3 } }),
      (m) => ({ ...m, source: { ...m.source, revision: '1' } }),
      (m) => ({ ...m, source: { ...m.source, extra: true } }),
      (m) => ({ ...m, source: { kind: 'goal', goalId: 'g1', revision: 1 } }),
      (m) => ({ ...m, source: Object.assign(Object.create({ kind: 'goal' }), { goalId: 'g1', revision: 1, round: 2 }) }),
      (m) => ({ ...m, source: hidden({ goalId: 'g1', revision: 1, round: 2, other: 1 }, 'kind', 'goal') }),
      (m) => ({ ...m, source: { ...m.source, [Symbol('tag')]: 1 } }),
      (m) => ({ ...m, content: [{ type: 'text', text: 'the prompt, edited' }] }),
      (m) => ({ ...m, content: [{ type: 'text', text: 'the prompt', cache: true }] }),
      (m) => ({ ...m, content: [...m.content, { type: 'text', text: 'more' }] }),
      (m) => ({ ...m, content: Object.assign([...m.content], { note: 'x' }) }),
      (m) => ({ ...m, content: [Object.assign(Object.create({ type: 'text' }), { text: 'the prompt' })] }),
      (m) => ({ ...m, content: { 0: m.content[0], length: 1 } }),
    ]
    for (const alter of altered) {
      const message = alter(own())
      const expected = { ...own(), content: own().content }
      // The reference answer: the comparison this check must agree with.
      const deep = (message as { id: string }).id === expected.id
        && isDeepStrictEqual((message as { source: unknown }).source, expected.source)
        && isDeepStrictEqual((message as { content: unknown }).content, expected.content)
      expect(deep).toBe(false)
      expect(round().isExactly(asMessage(message))).toBe(false)
    }
  })

  it('accepts what only the deep comparison can tell equal (a non-enumerable extra key)', () => {
    const { id, content, source } = own()
    const message = { id, content, source: hidden({ ...source }, 'note', 'not compared') }
    expect(round().isExactly(asMessage(message))).toBe(true)
  })
})
