import { afterEach, describe, expect, it } from 'vitest'
import type { Agent } from '@goalkeeper/agent-loop'
import { createHarness, jsonError, useOpenAIServers, type Harness } from '@goalkeeper/test-kit'
import * as openai from '@goalkeeper/model-openai'
import type { AutoResumeNotice } from '../src/index.ts'

// The reset time travels from a real HTTP 429 (Retry-After) through the HTTP provider, the agent loop and
// the round driver to this plugin; only the local server's answers are scripted.
const serve = useOpenAIServers()
let h: Harness | undefined
afterEach(async () => {
  await h?.dispose()
  h = undefined
})

async function limitedFor(retryAfter: string): Promise<{ agent: Agent; notices: AutoResumeNotice[] }> {
  const server = await serve([jsonError(429, { error: { message: 'Rate limit reached' } }, { 'retry-after': retryAfter })])
  h = await createHarness()
  await h.load(await import('@goalkeeper/goal'), {})
  await h.load(await import('../src/index.ts'), { enabled: true })
  await h.load(await import('@goalkeeper/goal-session'))
  await h.load(openai, { preset: 'custom', name: 'local', baseUrl: server.url, model: 'm1', maxRetries: 0 })
  const agent = await h.createAgent({ model: 'local' })
  const notices: AutoResumeNotice[] = []
  const settled = new Promise<void>((resolve) => h!.root.on('goal/auto-resume', (_agent, notice) => {
    notices.push(notice)
    resolve()
  }))
  h.root.goals.create(agent, { objective: 'Keep going' })
  await settled
  return { agent, notices }
}

describe('a reset announced by the server', () => {
  it('30 h away (Retry-After: 108000) is declined as beyond the 26 h horizon, not scheduled at one day', async () => {
    const { agent, notices } = await limitedFor('108000')
    expect(notices).toEqual([{ kind: 'declined', goalId: expect.any(String), why: 'the limit resets in 30h (as the provider announced), beyond the longest wait of 26h' }])
    expect(h!.root.goalAutoResume.pending(agent)).toBeUndefined()
    expect(h!.root.goals.get(agent)).toMatchObject({ phase: 'blocked', blockedReason: { code: 'usage-limited' } })
  })

  it('25 h away is waited for', async () => {
    const { agent, notices } = await limitedFor('90000')
    expect(notices).toEqual([expect.objectContaining({ kind: 'scheduled', waitMs: 90_000_000 + 30_000, attempt: 1 })])
    h!.root.goalAutoResume.cancel(agent, 'test over')
  })
})
