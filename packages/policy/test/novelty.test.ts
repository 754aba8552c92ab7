import { describe, expect, it } from 'vitest'
import Schema from 'schemastery'
import {
  DEFAULT_EMPTY_RESULTS, DEFAULT_VOLATILE_PATTERNS, EmptyResults, NewResults, Occurrences, emptyResultMatcher, resultFingerprint, strictConfig, volatileMasker,
} from '@goalkeeper/policy'

describe('Occurrences', () => {
  it('counts sightings per key, 1 for a new one', () => {
    const seen = new Occurrences()
    expect([seen.add('a'), seen.add('b'), seen.add('a'), seen.add('a')]).toEqual([1, 1, 2, 3])
    expect(seen.count('a')).toBe(3)
    expect(seen.count('c')).toBe(0)
    seen.clear()
    expect(seen.add('a')).toBe(1)
  })

  it('forgets the least recently seen key beyond its capacity', () => {
    const seen = new Occurrences(3)
    seen.add('a')
    seen.add('b')
    seen.add('c')
    seen.add('a')
    seen.add('d')
    expect(seen.size).toBe(3)
    expect(seen.count('b')).toBe(0)
    expect(seen.count('a')).toBe(2)
  })
})

describe('empty results', () => {
  const empty = emptyResultMatcher(DEFAULT_EMPTY_RESULTS)

  it('knows a blank result, the workspace search finding nothing and an empty listing', () => {
    expect(empty('')).toBe(true)
    expect(empty('  \n')).toBe(true)
    expect(empty('No matches for /fooBar/i in . (12 file(s) searched).')).toBe(true)
    expect(empty('(empty directory)')).toBe(true)
    expect(empty('No results')).toBe(true)
  })

  it('does not take a result that found something for empty', () => {
    expect(empty('a.txt:1: No matches for this line')).toBe(false)
    expect(empty('src/\nREADME.md')).toBe(false)
    expect(empty('emptyFile.ts')).toBe(false)
  })

  it('is a config field whose bad entries are named', () => {
    const Config = strictConfig(Schema.object({ emptyResults: EmptyResults }), (config) => { emptyResultMatcher(config.emptyResults, 'emptyResults') })
    expect(Config({}).emptyResults).toEqual(DEFAULT_EMPTY_RESULTS)
    expect(() => Config({ emptyResults: ['ok', '['] })).toThrow(/emptyResults\[1\] is not a valid regular expression/)
  })
})

describe('resultFingerprint', () => {
  const mask = volatileMasker(DEFAULT_VOLATILE_PATTERNS)
  const ok = (name: string, content: string) => ({ name, ok: true, content })

  it('is the same for the same answer, whatever its volatile parts', () => {
    expect(resultFingerprint(ok('run_command', 'built\n[Exit code 0 after 0.4 s.]'), mask))
      .toBe(resultFingerprint(ok('run_command', 'built\n[Exit code 0 after 3.1 s.]'), mask))
  })

  it('tells tools, outcomes and contents apart', () => {
    const base = resultFingerprint(ok('read_file', 'alpha'), mask)
    expect(resultFingerprint(ok('search', 'alpha'), mask)).not.toBe(base)
    expect(resultFingerprint(ok('read_file', 'beta'), mask)).not.toBe(base)
    expect(resultFingerprint({ name: 'read_file', ok: false, content: 'alpha', error: { code: 'NOT_FOUND', message: 'gone' } }, mask)).not.toBe(base)
  })
})

describe('NewResults', () => {
  it('is true once per result that found something, whatever the arguments; never for failures or empty results', () => {
    const results = new NewResults({ emptyResults: DEFAULT_EMPTY_RESULTS, volatilePatterns: DEFAULT_VOLATILE_PATTERNS })
    const ok = (content: string) => ({ name: 'read_file', ok: true, content })
    expect(results.add(ok('alpha'))).toBe(true)
    expect(results.add(ok('alpha'))).toBe(false)
    expect(results.found(ok('alpha'))).toBe(true)
    expect(results.add(ok('No matches for /x/i in . (3 file(s) searched).'))).toBe(false)
    expect(results.found(ok(''))).toBe(false)
    expect(results.add({ name: 'read_file', ok: false, content: '', error: { code: 'NOT_FOUND', message: 'gone' } })).toBe(false)
    results.clear()
    expect(results.add(ok('alpha'))).toBe(true)
  })
})
