import fc from 'fast-check'
import { createMasker } from '@goalkeeper/kit'
import { describe, expect, it } from 'vitest'
import { HeldText } from '../src/held-text.ts'

const secret = 'hunter2-correct-horse'
const masker = createMasker({ env: { DB_PASSWORD: secret }, label: ({ name }) => `[redacted ${name}]` })
const mask = (text: string) => masker.mask(text)

describe('HeldText', () => {
  it('never lets a secret out in pieces, however the text is split, and sends all of the masked text', () => {
    const seed = 1717
    fc.assert(fc.property(
      fc.string({ maxLength: 80 }), fc.string({ maxLength: 80 }), fc.array(fc.nat(200), { maxLength: 8 }),
      (before, after, cuts) => {
        const full = `${before}${secret}${after} and sk-proj-ABCDEFGHIJKLMNOP1234 too`
        const points = [...new Set(cuts.map((cut) => cut % (full.length + 1)))].sort((a, b) => a - b)
        const held = new HeldText(mask, 64)
        const sent: string[] = []
        let last = 0
        for (const point of [...points, full.length]) {
          const piece = held.push(full.slice(last, point))
          last = point
          if (piece) sent.push(piece)
        }
        const rest = held.finish(full)
        if (rest) sent.push(rest)
        expect(sent.join('')).toBe(mask(full))
        for (const piece of sent) expect(piece).not.toMatch(/hunter|ABCDEFGH/)
      },
    ), { seed, numRuns: 300 })
  })

  it('streams long text as it comes, keeping only the held-back end', () => {
    const held = new HeldText(mask, 10)
    expect(held.push('short')).toBeUndefined()
    expect(held.push(' and now a longer piece')).toBe('short and now a lo')
    expect(held.finish('short and now a longer piece')).toBe('nger piece')
  })
})
