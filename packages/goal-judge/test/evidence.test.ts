import { describe, expect, it } from 'vitest'
import { AGENT_JUDGE_NOTE, JUDGE_SYSTEM_PROMPT, refusal, renderEvidence, type Evidence } from '../src/index.ts'

const base: Evidence = { objective: 'Ship it', checks: [], diff: undefined, completion: 'Done.', files: [] }

describe('renderEvidence', () => {
  it('cuts a large patch to the size asked for and keeps its summary and hash whole', () => {
    const patch = 'x'.repeat(50_000)
    const text = renderEvidence(base, { ...base, diff: { summary: ' a.txt | 1 +', patch, sha256: 'f'.repeat(64) } }, 10_000)
    expect(text.length).toBeLessThanOrEqual(10_000)
    expect(text).toContain(`Summary (sha256 ${'f'.repeat(64)}):\n<<<\n a.txt | 1 +\n>>>`)
    expect(text).toMatch(/\(patch cut: \d+ of 50000 characters shown; the summary above is complete\)/)
  })

  it('says when there is no check, no named file and no git work tree', () => {
    expect(renderEvidence(base, base, 10_000)).toMatchSnapshot()
  })
})

describe('the judge\'s texts', () => {
  it('tells the judge to decide from evidence and answer by the schema', () => {
    expect(JUDGE_SYSTEM_PROMPT).toMatchSnapshot()
  })

  it('tells the agent its completion is reviewed, and from what', () => {
    expect(AGENT_JUDGE_NOTE).toMatchSnapshot()
  })

  it('tells the model what is missing', () => {
    expect(refusal('cheap', { verdict: 'cannot-tell', reasons: ['No test output.'], missing: [] })).toMatchSnapshot()
  })
})
