import { describe, expect, it } from 'vitest'
import { isRecord } from '@goalkeeper/kit'

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
