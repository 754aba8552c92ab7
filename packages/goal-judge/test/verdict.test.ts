import { describe, expect, it } from 'vitest'
import { parseVerdict } from '../src/index.ts'

describe('parseVerdict', () => {
  it('reads a verdict alone or in a json fence', () => {
    const value = { verdict: 'not-met', reasons: [' The test fails. '], missing: ['a passing test'] }
    expect(parseVerdict(JSON.stringify(value))).toEqual({ ok: true, value: { verdict: 'not-met', reasons: ['The test fails.'], missing: ['a passing test'] } })
    expect(parseVerdict('```json\n' + JSON.stringify(value) + '\n```')).toMatchObject({ ok: true, value: { verdict: 'not-met' } })
  })

  it.each([
    ['Met!', 'the answer is not a JSON object'],
    ['[1]', 'the answer is not a JSON object'],
    ['{"verdict":"done","reasons":["x"],"missing":[]}', 'verdict is not one of met, not-met, cannot-tell'],
    ['{"verdict":"met","reasons":[],"missing":[]}', 'reasons must have 1 to 10 items, has 0'],
    ['{"verdict":"met","reasons":["ok"]}', 'missing is not a list'],
    ['{"verdict":"met","reasons":["ok", 3],"missing":[]}', 'reasons[1] is not non-empty text of at most 1000 characters'],
    ['{"verdict":"met","reasons":["ok"],"missing":[],"confidence":1}', 'unexpected keys confidence'],
    ['Sure: {"verdict":"met","reasons":["ok"],"missing":[]}', 'the answer is not a JSON object'],
  ])('refuses %s', (text, why) => {
    expect(parseVerdict(text)).toEqual({ ok: false, why })
  })
})
