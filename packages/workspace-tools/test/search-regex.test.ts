import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { setup, type Setup } from './helpers.ts'

let t: Setup
beforeEach(async () => {
  t = await setup({ searchTimeoutMs: 500 })
  await fs.writeFile(path.join(t.workspace, 'ok.txt'), 'alpha\nbeta\n')
  // Against this line, /(a+)+$/ backtracks 2^32 times: minutes of a blocked event loop.
  await fs.writeFile(path.join(t.workspace, 'trap.txt'), `${'a'.repeat(32)}!\n`)
})
afterEach(async () => {
  await t.dispose()
})

describe('search with a catastrophic regular expression', () => {
  it('gives up at searchTimeoutMs with SEARCH_TIMEOUT, and the process stays responsive meanwhile', async () => {
    let ticks = 0
    const timer = setInterval(() => (ticks += 1), 10)
    try {
      const result = await t.run('search', { pattern: '(a+)+$' })
      expect(result.error?.code).toBe('SEARCH_TIMEOUT')
      expect(result.content).toContain('500 ms')
      expect(result.content).toContain('backtracks catastrophically')
    } finally {
      clearInterval(timer)
    }
    // The interval kept firing while the expression ran elsewhere.
    expect(ticks).toBeGreaterThan(5)
  })

  it('stops the expression when the call is aborted', async () => {
    const controller = new AbortController()
    const pending = t.direct('search', { pattern: '(a+)+$', path: 'trap.txt' }, controller.signal)
    setImmediate(() => controller.abort())
    expect(await pending).toMatchObject({ code: 'ABORTED' })
  })

  it('still finds ordinary matches, case-insensitively by default', async () => {
    expect((await t.run('search', { pattern: 'BETA' })).content).toBe('ok.txt:2: beta')
    expect((await t.run('search', { pattern: '^a+!$' })).content).toBe(`trap.txt:1: ${'a'.repeat(32)}!`)
  })
})
