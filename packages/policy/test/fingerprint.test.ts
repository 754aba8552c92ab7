import { describe, expect, it } from 'vitest'
import Schema from 'schemastery'
import { DEFAULT_VOLATILE_PATTERNS, similarity, strictConfig, volatileMasker, VolatilePatterns } from '@goalkeeper/policy'

const mask = volatileMasker(DEFAULT_VOLATILE_PATTERNS)
const same = (a: string, b: string) => expect(mask(a)).toBe(mask(b))
const differ = (a: string, b: string) => expect(mask(a)).not.toBe(mask(b))

describe('volatile masking with the default patterns', () => {
  it('makes two runs of the same failing command match whatever their duration, keeping the exit code', () => {
    same('FAIL a.test.ts\n[Exit code 1 after 0.4 s.]', 'FAIL a.test.ts\n[Exit code 1 after 12.9 s.]')
    differ('[Exit code 1 after 0.4 s.]', '[Exit code 2 after 0.4 s.]')
    same('[Timed out after 200 ms; the command and its child processes were killed.]', '[Timed out after 5000 ms; the command and its child processes were killed.]')
    same('Done in 1m 30.5s', 'Done in 2m 3s')
    same('took 3 seconds', 'took 14 seconds')
  })

  it('masks timestamps, temporary directories, process ids and addresses', () => {
    same('at 2024-05-01T10:00:01.123Z: started', 'at 2025-01-31T23:59:59+02:00: started')
    same('Thu May  2 10:00:01 UTC 2024', 'Thu May  2 10:00:07 UTC 2024')
    same('elapsed 00:01.25', 'elapsed 00:03.75')
    same('ts=1714550400123', 'ts=1714550499999')
    same('wrote /tmp/gk-Ab12x/out.log', 'wrote /tmp/gk-Zz99q/out.log')
    differ('wrote /tmp/gk-Ab12x/out.log', 'wrote /tmp/gk-Ab12x/err.log')
    same('server pid 12345 started', 'server PID: 99 started')
    same('segfault at 0x7ffd1234abcd', 'segfault at 0x7ffc9999abcd')
  })

  it('keeps what is progress: counts, percentages, line numbers', () => {
    differ('step 3/10 (30%)', 'step 4/10 (40%)')
    differ('Tests: 3 passed, 1 failed', 'Tests: 4 passed, 0 failed')
    differ('a.txt:10:20: text', 'a.txt:11:20: text')
  })

  it('accepts /source/flags entries and refuses an invalid one, naming it', () => {
    expect(volatileMasker(['/build #\\d+/i'])('BUILD #12 ok')).toBe(volatileMasker(['/build #\\d+/i'])('build #13 ok'))
    const Config = strictConfig(Schema.object({ volatilePatterns: VolatilePatterns }), (config) => { volatileMasker(config.volatilePatterns, 'volatilePatterns') })
    expect(Config({}).volatilePatterns).toEqual(DEFAULT_VOLATILE_PATTERNS)
    expect(() => Config({ volatilePatterns: ['ok', '('] })).toThrow(/volatilePatterns\[1\] is not a valid regular expression/)
  })
})

describe('similarity', () => {
  it('is 1 for equal texts, falls with the edit distance, and is 0 for long different texts', () => {
    expect(similarity('abc', 'abc')).toBe(1)
    expect(similarity('kitten', 'sitting')).toBeCloseTo(1 - 3 / 7)
    expect(similarity('', 'abc')).toBe(0)
    const long = 'x'.repeat(20_000)
    expect(similarity(long, long)).toBe(1)
    expect(similarity(long, `${long}y`)).toBe(0)
  })
})
