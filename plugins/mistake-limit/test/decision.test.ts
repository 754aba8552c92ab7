import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { Agent } from '@goalkeeper/agent-loop'
import * as mistakeLimit from '@goalkeeper/mistake-limit'
import type { MistakeLimitState } from '@goalkeeper/mistake-limit'
import { call, done, harnessWith, outcomes, pluginMessages, prompt, tools, userTexts, type Harness } from '@goalkeeper/test-kit'

let h: Harness
beforeEach(async () => { h = await harnessWith() })
afterEach(() => h.dispose())

let missing = 0
const fail = () => tools(call('read_file', { path: `missing-${++missing}.txt` }))

async function runFailing(steps: number, config: Record<string, unknown> = {}): Promise<Agent> {
  await h.load(mistakeLimit, { limit: 2, ...config })
  const agent = await h.createAgent()
  h.scripted.push(...Array.from({ length: steps }, fail), done())
  await prompt(agent, 'go')
  return agent
}

describe('mistake-limit decision hook', () => {
  it('continue: the guidance reaches the model and the count starts over', async () => {
    const states: MistakeLimitState[] = []
    h.root.on('mistake-limit/reached', (_agent, state) => {
      states.push(state)
      return { action: 'continue', guidance: 'Create the file first, then read it.' }
    })
    const agent = await runFailing(3)
    expect(states).toHaveLength(1)
    expect(states[0]).toMatchObject({ turn: 1, step: 2, count: 2, limit: 2, cause: 'tool-failures' })
    expect(states[0].failures.map((f) => [f.step, f.tool, f.code])).toEqual([[1, 'read_file', 'NOT_FOUND'], [2, 'read_file', 'NOT_FOUND']])
    expect(userTexts(h.scripted.requests[2]).at(-1)).toBe('Create the file first, then read it.')
    // One more failure after the continue is below the limit again.
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'completed' }])
  })

  it('continue without guidance steers the default guidance', async () => {
    h.root.on('mistake-limit/reached', async () => ({ action: 'continue' as const }))
    await runFailing(2)
    expect(userTexts(h.scripted.requests[2]).at(-1)).toBe(
      'Mistake limit: the last 2 steps all failed. Before the next call, re-read the errors, check the arguments against each tool\'s schema,'
      + ' and try a different approach instead of repeating what failed.',
    )
  })

  it('asks again only after another full run of failures', async () => {
    let asked = 0
    h.root.on('mistake-limit/reached', () => (++asked, { action: 'continue' }))
    await runFailing(5)
    expect(asked).toBe(2)
  })

  it('stop: the reason is part of the message', async () => {
    h.root.on('mistake-limit/reached', () => ({ action: 'stop', reason: 'out of budget' }))
    const agent = await runFailing(3)
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'aborted', cause: 'policy' }])
    expect(pluginMessages(h.records(agent), 'mistake-limit')[0]).toContain('. Decision: out of budget. The session is kept')
  })

  it('no listener: stop without a decision line', async () => {
    const agent = await runFailing(3)
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'aborted', cause: 'policy' }])
    expect(pluginMessages(h.records(agent), 'mistake-limit')[0]).not.toContain('Decision:')
  })

  it('a throwing listener means stop, with the error as the reason', async () => {
    h.root.on('mistake-limit/reached', () => { throw new Error('prompt unavailable') })
    const agent = await runFailing(3)
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'aborted', cause: 'policy' }])
    expect(pluginMessages(h.records(agent), 'mistake-limit')[0]).toContain('Decision: the decision hook failed: prompt unavailable.')
  })

  it('no answer within decisionTimeoutMs means stop', async () => {
    h.root.on('mistake-limit/reached', () => new Promise(() => {}))
    const agent = await runFailing(3, { decisionTimeoutMs: 50 })
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'aborted', cause: 'policy' }])
    expect(pluginMessages(h.records(agent), 'mistake-limit')[0]).toContain('Decision: no decision within 50 ms.')
  })

  it('a malformed answer means stop', async () => {
    h.root.on('mistake-limit/reached', () => ({ action: 'retry' }) as any)
    const agent = await runFailing(3)
    expect(pluginMessages(h.records(agent), 'mistake-limit')[0]).toContain('Decision: the decision hook gave a malformed answer.')
  })
})
