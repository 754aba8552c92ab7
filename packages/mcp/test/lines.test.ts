import { describe, expect, it } from 'vitest'
import { type CutLine, LineSplitter } from '../src/lines.ts'
import { cutResult } from '../src/stdio.ts'

function split(chunks: string[], max: number, tail = 0, early = false) {
  const lines: string[] = []
  const cuts: { head: string; tail: string; bytes: number }[] = []
  const splitter = new LineSplitter(max, (line) => lines.push(line.toString()), (cut) => cuts.push({ head: cut.head.toString(), tail: cut.tail.toString(), bytes: cut.bytes }), tail, early)
  for (const chunk of chunks) splitter.push(Buffer.from(chunk))
  return { lines, cuts }
}

describe('LineSplitter', () => {
  it('gives lines however the chunks fall, and keeps a partial line until its newline', () => {
    expect(split(['ab', 'c\nde', '\n\nf'], 100)).toEqual({ lines: ['abc', 'de', ''], cuts: [] })
  })

  it('cuts a line over the cap: its head and tail at its end, or at once when early', () => {
    expect(split(['0123', '456789', 'abc\nok\n'], 5, 3)).toEqual({ lines: ['ok'], cuts: [{ head: '01234', tail: 'abc', bytes: 13 }] })
    expect(split(['0123', '456789', 'abc'], 5, 0, true)).toEqual({ lines: [], cuts: [{ head: '01234', tail: '', bytes: 10 }] })
  })
})

const cut = (line: string, max = 20): CutLine => ({ head: Buffer.from(line.slice(0, max)), tail: Buffer.from(line.slice(-256)), bytes: Buffer.byteLength(line) })

describe('cutResult', () => {
  it('finds the id at the end or the start and keeps the start of the text, escapes decoded', () => {
    const text = 'a\\"b\\u00e9' + 'x'.repeat(100)
    const last = `{"result":{"content":[{"type":"text","text":"${text}"}]},"jsonrpc":"2.0","id":42}`
    expect(cutResult(cut(last, 80), 5)).toEqual({ jsonrpc: '2.0', id: 42, result: { content: [{ type: 'text', text: 'a"béx' }], _meta: { 'goalkeeper/cut': { bytes: last.length } } } })
    const first = `{"jsonrpc":"2.0","id":"r-1","result":{"content":[{"type":"text","text":"${text}"}]}}`
    expect(cutResult(cut(first, 80), 3)).toMatchObject({ id: 'r-1', result: { content: [{ text: 'a"b' }] } })
  })

  it('gives nothing for a line without an id or that is not a result', () => {
    expect(cutResult(cut(`{"result":{"content":[]},"x":1}`), 5)).toBeUndefined()
    expect(cutResult(cut(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"${'x'.repeat(50)}"},"id":3}`), 5)).toBeUndefined()
  })
})
