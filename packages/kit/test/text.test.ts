import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { clip, tail } from '@goalkeeper/kit'

const SEED = 1109
const isWellFormed = (text: string) => !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(text)

describe('clip', () => {
  it('keeps text that fits and cuts longer text to max characters, the marker included', () => {
    expect(clip('short', 5)).toBe('short')
    expect(clip('abcdefgh', 5)).toBe('abcd…')
    expect(clip('abcdefgh', 6, '...')).toBe('abc...')
    expect(clip('abcdefgh', 3, '')).toBe('abc')
  })

  it('never ends between the halves of a surrogate pair', () => {
    expect(clip('ab😀cd', 4)).toBe('ab…')
    expect(clip('ab😀cd', 5)).toBe('ab😀…')
    expect(clip('ab😀cd', 3, '')).toBe('ab')
  })

  it(`gives well-formed text no longer than max for any well-formed input (fast-check seed ${SEED})`, () => {
    console.log(`fast-check seed ${SEED}`)
    fc.assert(fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), fc.integer({ min: 1, max: 50 }), (text, max) => {
      const out = clip(text, max)
      expect(out.length).toBeLessThanOrEqual(Math.max(max, 1))
      expect(isWellFormed(out)).toBe(true)
      if (text.length <= max) expect(out).toBe(text)
      else expect(text.startsWith(out.slice(0, -1))).toBe(true)
    }), { seed: SEED })
  })
})

describe('tail', () => {
  it('keeps the last max characters, never starting inside a surrogate pair', () => {
    expect(tail('abc', 5)).toBe('abc')
    expect(tail('abcdef', 2)).toBe('ef')
    expect(tail('ab😀cd', 3)).toBe('cd')
    expect(tail('ab😀cd', 4)).toBe('😀cd')
    expect(tail('abc', 0)).toBe('')
  })
})
