import { describe, expect, it } from 'vitest'
import { wildcard } from '@goalkeeper/policy'

describe('wildcards', () => {
  it('matches * as any run and everything else literally', () => {
    const match = wildcard(['job_*', 'read.file', '*_status'])
    expect(['job_status', 'job_', 'read.file', 'build_status'].every(match)).toBe(true)
    expect(['read_file', 'xjob_stat', 'job'].some(match)).toBe(false)
    expect(wildcard([])('anything')).toBe(false)
  })
})
