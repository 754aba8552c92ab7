import { describe, expect, it } from 'vitest'
import { describeError } from '@goalkeeper/kit'

describe('describeError', () => {
  it('gives one line: the message, the name when the message is empty, any other value as a string', () => {
    expect(describeError(new Error('disk full'))).toBe('disk full')
    expect(describeError(new TypeError(''))).toBe('TypeError')
    expect(describeError(new Error('first line\n   second line\n\n'))).toBe('first line second line')
    expect(describeError('plain text')).toBe('plain text')
    expect(describeError(42)).toBe('42')
    expect(describeError(undefined)).toBe('undefined')
  })

  it('gives the stack only when asked, for log lines', () => {
    const error = new Error('boom')
    expect(describeError(error, { stack: true })).toBe(error.stack)
    expect(describeError(error, { stack: true })).toContain('\n    at ')
    expect(describeError('no stack', { stack: true })).toBe('no stack')
  })

  it('never throws, even for a value that cannot be turned into text', () => {
    expect(describeError(Object.create(null))).toBe('a thrown value that cannot be shown as text')
    const hostile = new Proxy({}, { get: () => { throw new Error('trap') } })
    expect(describeError(hostile)).toBe('a thrown value that cannot be shown as text')
  })
})
