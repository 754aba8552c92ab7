import { describe, expect } from 'vitest'
import type { Events } from 'cordis'
import { it, nextEvent } from './helpers.ts'
import { checkLog } from './invariants.ts'

/** Every event the loop dispatches isolated: DESIGN.md section 6 and the loop's own extensions. */
const ISOLATED = [
  'agent/created', 'agent/session-start', 'agent/status', 'agent/queued', 'agent/cancel-requested', 'agent/turn-start',
  'agent/tool-start', 'agent/tool-end', 'agent/turn-end', 'agent/error', 'agent/disposed', 'agent/system-prompt', 'agent/text-delta',
  'agent/reasoning-delta',
] as const

describe('listener isolation', () => {

  it('a throwing and a rejecting listener of every isolated event are logged, and the others and the loop go on', async ({ h }) => {
    const reached = new Set<string>()
    for (const name of ISOLATED) {
      const on = h.root.on.bind(h.root) as (name: keyof Events, listener: (...args: any[]) => unknown) => () => void
      on(name, () => { throw new Error(`sync failure in ${name}`) })
      on(name, async () => { throw new Error(`async failure in ${name}`) })
      on(name, () => { reached.add(name) })
    }
    const agent = await h.createAgent()
    h.scripted.push({ text: 'calling', reasoning: 'echo first', toolCalls: [{ name: 'echo', arguments: { text: 'x' } }] }, { kind: 'error', code: 'SERVER', message: 'down' }, { kind: 'hang' })
    agent.send({ content: 'one' })
    await agent.whenIdle()
    const started = nextEvent(h.root, 'agent/turn-start')
    agent.send({ content: 'two' })
    await started
    expect(agent.cancel('user')).toBe(true)
    await agent.whenIdle()
    const records = h.records(agent)
    await agent.dispose()

    expect([...reached].sort()).toEqual([...ISOLATED].sort())
    expect(checkLog(records)).toEqual([])
    expect(records.filter((r) => r.type === 'turn/end').map((r: any) => r.data.outcome.kind)).toEqual(['error', 'aborted'])
    // Rejections are logged once they settle; dispose awaited several macrotasks.
    const errors = h.errors().join('\n')
    for (const name of ISOLATED) {
      expect(errors).toContain(`sync failure in ${name}`)
      expect(errors).toContain(`async failure in ${name}`)
    }
  })

  it('a failing agent/step-end listener is logged while the other listeners are still awaited', async ({ h }) => {
    const agent = await h.createAgent()
    let finished = false
    let finishedAtNextCall: boolean | undefined
    h.root.on('agent/step-end', () => { throw new Error('step-end broke') })
    h.root.on('agent/step-end', async () => {
      // Gives a loop that did not wait every chance to call the model first.
      await new Promise((resolve) => setImmediate(resolve))
      finished = true
    })
    h.scripted.push({ toolCalls: [{ name: 'echo', arguments: { text: 'x' } }] }, () => {
      finishedAtNextCall = finished
      return { text: 'done' }
    })
    agent.send({ content: 'go' })
    await agent.whenIdle()
    expect(finishedAtNextCall).toBe(true)
    expect(h.errors().join('\n')).toContain('step-end broke')
    expect(h.records(agent).at(-1)!.data).toMatchObject({ outcome: { kind: 'completed' } })
  })
})
