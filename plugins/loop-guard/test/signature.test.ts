import { describe, expect, it } from 'vitest'
import { canonicalArguments, normalizePath } from '../src/signature.ts'

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
