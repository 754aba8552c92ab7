import { describe, expect } from 'vitest'
import { call, done, tools } from '@goalkeeper/test-kit'
import { describeRecords, it } from './helpers.ts'
import { checkLog } from './invariants.ts'

const results = (records: readonly { type: string; data: unknown }[]) =>
  records.filter((r) => r.type === 'tool/result').map((r) => r.data as { ok: boolean; content: string; denied?: { by: string; reason: string } })

describe('wrapUp', () => {
  it('modelCalls 0: the calls of the step not yet run are refused, and no further model call is made', async ({ h }) => {
    const agent = await h.createAgent()
    h.root.on('agent/tool-end', (a, info) => {
      if (info.step === 1 && results(h.records(a)).length === 1) expect(a.wrapUp(info.turn, { by: 'test-stop', reason: 'stopped here' })).toBe(true)
    })
    h.scripted.push(tools(call('echo', { text: 'runs' }), call('echo', { text: 'refused' })), done('never asked'))
    const cancels = h.events(['agent/cancel-requested'])
    agent.send({ content: 'go' })
    await agent.whenIdle()
    expect(h.scripted.requests).toHaveLength(1)
    expect(results(h.records(agent)).map((r) => [r.ok, r.content, r.denied])).toEqual([
      [true, 'runs', undefined],
      [false, 'The call was denied by test-stop: stopped here', { by: 'test-stop', reason: 'stopped here' }],
    ])
    expect(describeRecords(h.records(agent)).at(-1)).toBe('turn/end 1 aborted')
    expect(cancels.map((e) => e.args[1])).toEqual(['policy'])
    expect(checkLog(h.readFile(agent))).toEqual([])
  })

  it('modelCalls 1 from the next step: one wrap-up step; text ends the turn completed, a tool call in it is refused and ends it', async ({ h }) => {
    for (const [wrapUpReply, outcome] of [[done('summary'), 'completed'], [tools(call('echo', { text: 'late' })), 'aborted']] as const) {
      const agent = await h.createAgent()
      h.root.on('agent/step-end', (a, turn, step) => {
        if (a === agent && step === 1) a.wrapUp(turn, { by: 'test-stop', reason: 'wrap up', modelCalls: 1, fromStep: 2 })
      })
      h.scripted.push(tools(call('echo', { text: 'same step runs' })), wrapUpReply, done('never asked'))
      agent.send({ content: 'go' })
      await agent.whenIdle()
      expect(h.scripted.remaining).toBe(1)
      expect(results(h.records(agent)).map((r) => r.ok)).toEqual(outcome === 'completed' ? [true] : [true, false])
      expect(describeRecords(h.records(agent)).at(-1)).toBe(`turn/end 1 ${outcome}`)
      h.scripted.reset()
    }
  })

  it('keeps the stricter bounds when called twice, and refuses bad options or a turn that is not open', async ({ h }) => {
    const agent = await h.createAgent()
    expect(agent.wrapUp(1, { by: 'x', reason: 'y' })).toBe(false)
    expect(() => agent.wrapUp(1, { by: '', reason: 'y' })).toThrow(/by/)
    expect(() => agent.wrapUp(1, { by: 'x', reason: 'y', modelCalls: 2 as never })).toThrow(/modelCalls/)
    h.root.on('agent/step-end', (a, turn, step) => {
      if (step !== 1) return
      a.wrapUp(turn, { by: 'first', reason: 'one more', modelCalls: 1 })
      a.wrapUp(turn, { by: 'second', reason: 'none' })
    })
    h.scripted.push(tools(call('echo', { text: 'a' })), done('never asked'))
    agent.send({ content: 'go' })
    await agent.whenIdle()
    expect(h.scripted.requests).toHaveLength(1)
    expect(describeRecords(h.records(agent)).at(-1)).toBe('turn/end 1 aborted')
  })
})
