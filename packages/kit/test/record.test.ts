import { describe, expect, it } from 'vitest'
import { Context, Service } from 'cordis'
import { cloneData, isRecord, untraced } from '@goalkeeper/kit'

describe('isRecord', () => {
  it('accepts objects whose keys can be read, including class instances and null-prototype objects', () => {
    expect(isRecord({})).toBe(true)
    expect(isRecord(JSON.parse('{"a":1}'))).toBe(true)
    expect(isRecord(Object.assign(new Error('x'), { code: 'ENOENT' }))).toBe(true)
    expect(isRecord(Object.create(null))).toBe(true)
  })

  it('refuses null, arrays and primitives', () => {
    for (const value of [null, undefined, [], [1], 'text', 0, true, Symbol('s')]) expect(isRecord(value)).toBe(false)
  })
})

describe('cloneData', () => {
  const goal = () => ({
    id: 'g1', objective: 'ship it', revision: 3, budgets: { tokens: 100 }, verify: ['npm test', 'npm run lint'],
    usage: { tokens: 12, costUsd: null, activeTimeMs: 5, calls: 2 }, blockedReason: undefined, lastRound: { round: 2, outcome: { kind: 'completed' } },
  })

  it('copies plain data as structuredClone does, sharing no object with the original', () => {
    const original = goal()
    const copy = cloneData(original)
    expect(copy).toStrictEqual(structuredClone(original))
    expect(Object.keys(copy)).toEqual(Object.keys(original))
    expect('blockedReason' in copy).toBe(true)
    copy.budgets.tokens = 1
    copy.verify.push('more')
    copy.lastRound.outcome.kind = 'changed'
    expect(original).toStrictEqual(goal())
  })

  it('leaves primitives as they are and gives a null-prototype object a plain one, like structuredClone', () => {
    for (const value of [null, undefined, 0, -0, 1.5, 'text', true, 10n]) expect(cloneData(value)).toBe(value)
    const bare = Object.assign(Object.create(null), { a: [1, { b: 2 }] })
    expect(cloneData(bare)).toStrictEqual(structuredClone(bare))
    expect(Object.getPrototypeOf(cloneData(bare))).toBe(Object.prototype)
  })

  it('copies what is not plain data (dates, maps, class instances) through structuredClone', () => {
    const at = new Date(1_700_000_000_000)
    const value = { at, seen: new Map([['a', 1]]), list: [at] }
    const copy = cloneData(value)
    expect(copy).toStrictEqual(structuredClone(value))
    expect(copy.at).toBeInstanceOf(Date)
    expect(copy.at).not.toBe(at)
    expect(copy.seen.get('a')).toBe(1)
  })

  it('refuses functions and symbols, as structuredClone does', () => {
    expect(() => cloneData({ run: () => 1 })).toThrow()
    expect(() => cloneData([Symbol('s')])).toThrow()
  })
})

describe('untraced', () => {
  it('gives the service behind Cordis\'s tracing proxy, and anything else as it is', async () => {
    class Counter extends Service {
      count = 0
      constructor(ctx: Context) {
        super(ctx, 'counter')
      }

      bump() {
        return ++this.count
      }
    }
    const root = new Context()
    await root.plugin(Counter)
    const traced = root.get('counter') as Counter
    const own = untraced(traced)
    expect(own).toBeInstanceOf(Counter)
    // Not the proxy: reads and calls go to the service itself, with the same state.
    expect(own).not.toBe(traced)
    expect(own.bump()).toBe(1)
    expect(traced.count).toBe(1)
    const plain = { get: () => 1 }
    expect(untraced(plain)).toBe(plain)
    for (const value of [undefined, null, 0, 'text']) expect(untraced(value)).toBe(value)
  })
})
