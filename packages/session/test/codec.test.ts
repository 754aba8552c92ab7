import { describe, expect, it } from 'vitest'
import { encodeRecord } from '../src/codec.ts'

class Point {
  constructor(public x: number) {}
}

describe('encodeRecord', () => {
  it('keeps in memory exactly what the line reads back as, for plain data and for everything JSON changes', () => {
    const values: unknown[] = [
      { turn: 1, text: 'line\n"quoted"\u2028 é 😀', nested: [1, [2, { a: null }], true], empty: {}, list: [] },
      'text', 0, -0, 1.5e300, true, null, [],
      { skipped: undefined, kept: 1 },
      [undefined, () => 1, Symbol('s')],
      { n: Number.NaN, i: Infinity },
      { when: new Date(0) },
      { point: new Point(3) },
      { custom: { toJSON: () => 'replaced' } },
      JSON.parse('{"__proto__":{"polluted":true},"a":1}'),
      Object.assign(Object.create(null), { bare: 1 }),
      { lone: '\ud800' },
      { deep: JSON.parse(`${'['.repeat(100)}1${']'.repeat(100)}`) },
    ]
    for (const value of values) {
      const { line, record } = encodeRecord(1, 2, 'x', value)
      expect(record.data).toStrictEqual(JSON.parse(line).data)
      expect(Object.getPrototypeOf(record.data ?? {})).toBe(Object.getPrototypeOf(JSON.parse(line).data ?? {}))
    }
  })

  it('copies: changing the caller\'s object afterwards changes nothing in memory', () => {
    const data = { list: [1, { a: 'b' }] }
    const { record } = encodeRecord(1, 2, 'x', data)
    ;(data.list[1] as { a: string }).a = 'changed'
    data.list.push(3)
    expect(record.data).toEqual({ list: [1, { a: 'b' }] })
  })
})
