// The envelope rules of codec.ts on their own: checkRecord for every way a line can be wrong, the header's
// own checks, and the errors of encodeRecord. codec.test.ts covers what encodeRecord keeps in memory.
import { describe, expect, it } from 'vitest'
import { checkRecord, encodeRecord, HEADER, headerOf } from '../src/codec.ts'

const header = { version: 1, id: 's1', createdAt: 1, cwd: '/w' }
const line0 = { seq: 0, at: 1, type: HEADER, data: header }
const line3 = { seq: 3, at: 5, type: 'user/message', data: { text: 'sk-secret-typed-by-a-user' } }

describe('checkRecord', () => {
  it('passes a valid header at seq 0 and a valid record after it', () => {
    expect(checkRecord(line0, 0, 's1')).toBeUndefined()
    expect(checkRecord(line3, 3, 's1')).toBeUndefined()
    expect(checkRecord({ ...line3, data: null }, 3, 's1')).toBeUndefined()
    // Version 2: one mac per batch of lines.
    expect(checkRecord({ ...line0, data: { ...header, version: 2 } }, 0, 's1')).toBeUndefined()
  })

  it('names each broken rule, as SESSION_BAD_SEQ for a seq out of place and SESSION_CORRUPT otherwise', () => {
    const problems = {
      'not an object': checkRecord('text', 3, 's1'),
      'null': checkRecord(null, 3, 's1'),
      'an array': checkRecord([line3], 3, 's1'),
      'another seq': checkRecord(line3, 4, 's1'),
      'seq as text': checkRecord({ ...line3, seq: '3' }, 3, 's1'),
      'no at': checkRecord({ ...line3, at: undefined }, 3, 's1'),
      'at not finite': checkRecord({ ...line3, at: Infinity }, 3, 's1'),
      'empty type': checkRecord({ ...line3, type: '' }, 3, 's1'),
      'no data': checkRecord({ seq: 3, at: 5, type: 'x' }, 3, 's1'),
      'seq 0 not a header': checkRecord({ ...line3, seq: 0 }, 0, 's1'),
      'a second header': checkRecord({ ...line0, seq: 3 }, 3, 's1'),
      'header data not an object': checkRecord({ ...line0, data: 'h' }, 0, 's1'),
      'header of another version': checkRecord({ ...line0, data: { ...header, version: 3 } }, 0, 's1'),
      'header of another session': checkRecord(line0, 0, 's2'),
      'header without cwd': checkRecord({ ...line0, data: { ...header, cwd: undefined } }, 0, 's1'),
      'header without createdAt': checkRecord({ ...line0, data: { ...header, createdAt: '1' } }, 0, 's1'),
    }
    expect(problems).toMatchSnapshot()
    const codes = Object.entries(problems).map(([name, problem]) => [name, problem?.code])
    expect(codes.filter(([, code]) => code === 'SESSION_BAD_SEQ').map(([name]) => name)).toEqual(['another seq', 'seq as text'])
    expect(codes.filter(([, code]) => code === undefined)).toEqual([])
  })

  it('never quotes the record\'s contents in a reason: they may hold a secret a user typed', () => {
    const secret = 'sk-secret-typed-by-a-user'
    const lines = [
      { ...line3, seq: secret }, { ...line3, at: secret }, { ...line3, type: '', data: secret },
      { seq: 0, at: 1, type: secret, data: secret }, { ...line0, data: { ...header, id: secret } }, { ...line0, data: secret },
    ]
    for (const line of lines) {
      const problem = checkRecord(line, line.seq === 0 ? 0 : 3, 's1')
      expect(problem).toBeDefined()
      expect(problem!.reason).not.toContain('secret')
    }
  })
})

describe('encodeRecord errors and headerOf', () => {
  it('refuses data JSON cannot write, naming the record type', () => {
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    expect(() => encodeRecord(1, 2, 'tool/result', cyclic)).toThrow(/^record data of type "tool\/result" is not JSON-serialisable: /)
    expect(() => encodeRecord(1, 2, 'x', undefined)).toThrow('record data of type "x" is not JSON-serialisable (undefined, a function or a symbol)')
    expect(() => encodeRecord(1, 2, 'x', () => 1)).toThrow(TypeError)
    expect(() => encodeRecord(1, 2, 'x', { big: 1n })).toThrow(TypeError)
  })

  it('writes the envelope in a fixed key order, the type JSON-quoted', () => {
    expect(encodeRecord(7, 1700000000000, 'a"b', { k: 1 }).line).toBe('{"seq":7,"at":1700000000000,"type":"a\\"b","data":{"k":1}}')
  })

  it('headerOf is the data of record 0', () => {
    expect(headerOf([{ seq: 0, at: 1, type: HEADER, data: header }])).toBe(header)
  })
})
