import { describe, expect, it } from 'vitest'
import { DEFAULT_VOLATILE_PATTERNS, volatileMasker } from '@goalkeeper/policy'
import { canonicalArguments, looseString, normalizePath } from '../src/signature.ts'

const options = { ignoreKeys: ['task_progress'], collapseWhitespace: true, normalizePaths: true }
const canon = (raw: string, o = options) => canonicalArguments(raw, o)

describe('canonical arguments', () => {
  it('sorts keys at every depth and keeps array order', () => {
    expect(canon('{"b":{"y":1,"x":[{"q":1,"p":2}]},"a":0}').text).toBe('{"a":0,"b":{"x":[{"p":2,"q":1}],"y":1}}')
    expect(canon('{"a":[1,2]}').text).not.toBe(canon('{"a":[2,1]}').text)
  })

  it('drops ignored keys at every depth', () => {
    expect(canon('{"path":"a","task_progress":"1/3","nested":{"task_progress":"x","k":1}}').text).toBe('{"nested":{"k":1},"path":"a"}')
  })

  it('collapses whitespace in strings only when asked', () => {
    expect(canon('{"q":"  a \\n\\t b "}').text).toBe('{"q":"a b"}')
    expect(canon('{"q":" a  b"}', { ...options, collapseWhitespace: false }).text).toBe('{"q":" a  b"}')
  })

  it('keeps what JSON.stringify would lose: a __proto__ key and out-of-range numbers', () => {
    expect(canon('{"__proto__":{"a":1},"b":2}').text).toBe('{"__proto__":{"a":1},"b":2}')
    expect([canon('{"n":null}').text, canon('{"n":1e400}').text, canon('{"n":-1e400}').text]).toEqual(['{"n":null}', '{"n":Infinity}', '{"n":-Infinity}'])
  })

  it('treats blank arguments as an empty object', () => {
    expect(canon('  ')).toEqual({ text: '{}', form: 'json' })
  })

  it('keeps unparsable text verbatim and marks it, so it never collides with parsed or other raw input', () => {
    expect(canon('{"path": "a"')).toEqual({ text: '{"path": "a"', form: 'invalid' })
    expect(canon('{"path": "b"').text).not.toBe(canon('{"path": "a"').text)
    expect(canon('[object Object]')).toEqual({ text: '[object Object]', form: 'invalid' })
  })
})

describe('path normalisation', () => {
  it.each([
    ['./a', 'a'], ['a/', 'a'], ['./src//lib/./x.ts', 'src/lib/x.ts'], ['./', '.'], ['/', '/'], ['/tmp/', '/tmp'], ['a/.', 'a'],
  ])('%s -> %s', (input, output) => expect(normalizePath(input)).toBe(output))

  it('leaves text that is not a path alone', () => {
    for (const text of ['a b/c', 'https://example.com/x/', 'plain', '.hidden', 'a.b']) expect(normalizePath(text)).toBe(text)
  })

  it('can be turned off', () => {
    expect(canon('{"p":"./a/"}', { ...options, normalizePaths: false }).text).toBe('{"p":"./a/"}')
  })
})

describe('the near-identical form', () => {
  const mask = volatileMasker(DEFAULT_VOLATILE_PATTERNS)
  const loose = (raw: string) => canonicalArguments(raw, { ...options, loose: (text) => looseString(text, mask) }).text

  it('masks JSON numbers, lone numbers, timestamps, shell comments and quoting style, and collapses whitespace', () => {
    expect(loose('{"path":"a.txt","end_line":12}')).toBe(loose('{"path":"a.txt","end_line":400}'))
    expect(loose('{"command":"sleep 5 && cat status"}')).toBe(loose('{"command":"sleep  0.5 && cat status"}'))
    expect(loose('{"command":"curl --max-time=30 x"}')).toBe(loose('{"command":"curl --max-time=5 x"}'))
    expect(loose('{"command":"cat a.txt # 2024-05-01T10:00:01Z"}')).toBe(loose('{"command":"cat a.txt"}'))
    expect(loose('{"command":"git log --since 2024-05-01T10:00:01Z"}')).toBe(loose('{"command":"git log --since 2025-01-02T03:04:05Z"}'))
    expect(loose(`{"command":"grep 'x' a.txt"}`)).toBe(loose('{"command":"grep \\"x\\"  a.txt"}'))
  })

  it('keeps digits that are part of a name, so different files or jobs stay different calls', () => {
    expect(loose('{"path":"test1.txt"}')).not.toBe(loose('{"path":"test2.txt"}'))
    expect(loose('{"command":"cat r21-0.n"}')).not.toBe(loose('{"command":"cat r21-1.n"}'))
    expect(loose('{"job":"job-12"}')).not.toBe(loose('{"job":"job-13"}'))
    expect(loose('{"command":"python3 -m v2"}')).not.toBe(loose('{"command":"python3 -m v3"}'))
  })
})
