import { describe, expect } from 'vitest'
import { call, done, tools } from '@goalkeeper/test-kit'
import { describeRecords, it } from './helpers.ts'
import { checkLog } from './invariants.ts'

describe('preempt', () => {
  it('ends the turn at the next step boundary: the step under way finishes, no further model call, queued input runs next', async ({ h }) => {
    const agent = await h.createAgent()
    const stepEnds: string[] = []
    h.root.on('agent/step-end', (_a, turn, step) => { stepEnds.push(`${turn}.${step}`) })
    h.scripted.push(
      () => {
        agent.send({ content: 'next' })
        expect(agent.preempt(1, 'someone spoke')).toBe(true)
        return tools(call('echo', { text: 'still runs' }))
      },
      done('answer to next'),
    )
    agent.send({ content: 'first' })
    await agent.whenIdle()
    const records = h.records(agent)
    expect(describeRecords(records)).toEqual([
      'input/queued first', 'turn/start 1', 'user/message first', 'step/start 1.1', 'input/queued next', 'assistant/message',
      'tool/call echo', 'tool/result ok', 'step/end 1.1', 'turn/end 1 preempted',
      'turn/start 2', 'user/message next', 'step/start 2.1', 'assistant/message', 'step/end 2.1', 'turn/end 2 completed',
    ])
    expect(records.find((r) => r.type === 'turn/end')!.data).toEqual({ turn: 1, outcome: { kind: 'preempted', cause: 'someone spoke' } })
    // The step's listeners ran: the boundary is after them.
    expect(stepEnds).toEqual(['1.1', '2.1'])
    expect(h.scripted.requests).toHaveLength(2)
    expect(checkLog(h.readFile(agent))).toEqual([])
  })

  it('before the first step ends the turn without a model call', async ({ h }) => {
    const agent = await h.createAgent()
    h.root.on('agent/turn-start', (a, turn) => { a.preempt(turn, 'at once') })
    agent.send({ content: 'first' })
    await agent.whenIdle()
    expect(describeRecords(h.records(agent))).toEqual(['input/queued first', 'turn/start 1', 'user/message first', 'turn/end 1 preempted'])
    expect(h.scripted.requests).toHaveLength(0)
  })

  it('lets a reply without tool calls complete, and a cancel wins over it', async ({ h }) => {
    const agent = await h.createAgent()
    h.scripted.push(() => {
      agent.preempt(1, 'late')
      return done('final words')
    })
    agent.send({ content: 'one' })
    await agent.whenIdle()
    h.scripted.push(() => {
      agent.preempt(2, 'yield')
      agent.cancel('user')
      return tools(call('echo', { text: 'x' }))
    })
    agent.send({ content: 'two' })
    await agent.whenIdle()
    const ends = h.records(agent).filter((r) => r.type === 'turn/end').map((r) => r.data)
    expect(ends).toEqual([{ turn: 1, outcome: { kind: 'completed' } }, { turn: 2, outcome: { kind: 'aborted', cause: 'user' } }])
  })

  it('is effective once, only for the open turn, and refuses an empty cause', async ({ h }) => {
    const agent = await h.createAgent()
    expect(agent.preempt(1, 'nothing open')).toBe(false)
    expect(() => agent.preempt(1, '  ')).toThrow(expect.objectContaining({ code: 'INVALID_OPTIONS' }))
    const answers: boolean[] = []
    h.scripted.push(() => {
      answers.push(agent.preempt(2, 'wrong turn'), agent.preempt(1, 'first'), agent.preempt(1, 'second'))
      return tools(call('echo', { text: 'x' }))
    })
    agent.send({ content: 'go' })
    await agent.whenIdle()
    expect(answers).toEqual([false, true, false])
    expect(h.records(agent).find((r) => r.type === 'turn/end')!.data).toEqual({ turn: 1, outcome: { kind: 'preempted', cause: 'first' } })
  })
})
