import { describe, expect, it } from 'vitest'
import { decisionText } from '@goalkeeper/policy'

describe('decisionText', () => {
  it('quotes a reason on one line, clipped so it cannot crowd out the cause, and nothing without one', () => {
    expect(decisionText('  out of\n budget ')).toBe(' Decision: out of budget.')
    expect(decisionText(undefined)).toBe('')
    expect(decisionText(' \n ')).toBe('')
    expect(decisionText('x'.repeat(600))).toBe(` Decision: ${'x'.repeat(499)}….`)
  })
})
