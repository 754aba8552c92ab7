import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import * as loopGuard from '@goalkeeper/loop-guard'
import { call, done, harnessWith, outcomes, pluginMessages, prompt, repeat, tools, type Harness } from '@goalkeeper/test-kit'

const NAMES = Array.from({ length: 12 }, (_, i) => `f${i}`)
let h: Harness
beforeEach(async () => { h = await harnessWith(Object.fromEntries(NAMES.map((n) => [`${n}.txt`, `contents of ${n}\n`]))) })
afterEach(() => h.dispose())

const read = (n: number) => tools(call('read_file', { path: `f${n}.txt` }))
const toolCalls = (agent: Parameters<Harness['records']>[0]) => h.records(agent).filter((r) => r.type === 'tool/call').length
const stopped = (agent: Parameters<Harness['records']>[0]) => pluginMessages(h.records(agent), 'loop-guard').filter((t) => t.startsWith('Loop guard stopped'))

describe('loop-guard blocks redone', () => {
  it('stops a block of 10 calls four calls into its second repetition, with a hint at two', async () => {
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    h.scripted.push(...repeat(3, () => repeat(10, (i) => read(i))).flat(), done('never requested'))
    await prompt(agent, 'go')
    // 10 calls, the first redo (10), then 4 of the second.
    expect(toolCalls(agent)).toBe(24)
    const messages = pluginMessages(h.records(agent), 'loop-guard')
    expect(messages[0]).toBe('Loop guard: calls already made in this goal are being made again with the same results: each of the last 2 calls repeated, '
      + 'with the same arguments and the same result, a call made 2 times before: `read_file` {"path":"f0.txt"} -> `read_file` {"path":"f1.txt"}. '
      + 'Redoing them returns what they returned before, even when those results are no longer in view (the conversation may have been summarised). '
      + 'Do not redo work already done: note what you need from it once, go on with the next step that is not done yet, or, if the task is finished '
      + 'or cannot be finished, stop calling tools and say so.')
    expect(stopped(agent)).toEqual([expect.stringMatching(/^Loop guard stopped this turn: calls already made in this goal are being made again .* each of the last 4 calls .*f3\.txt"\}\. The session is kept/)])
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'aborted', cause: 'policy' }])
  })

  it('catches a block whose passes differ (10 calls, then 9, then 10) and are separated by new work', async () => {
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    const pass = (skip?: number) => repeat(10, (i) => i).filter((i) => i !== skip).map(read)
    let written = 0
    const write = () => tools(call('write_file', { path: `out-${++written}.txt`, content: `new ${written}\n` }))
    h.scripted.push(...pass(), write(), ...pass(4), write(), ...pass(), done('never requested'))
    await prompt(agent, 'go')
    // 10 + 1 + 9 + 1, then four calls into the third pass.
    expect(toolCalls(agent)).toBe(25)
    expect(stopped(agent)).toHaveLength(1)
  })

  it('leaves the first redo alone, and a block redone with new results between its calls', async () => {
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    let n = 0
    const fresh = () => tools(call('write_file', { path: `note-${++n}.txt`, content: `${n}\n` }))
    // Three passes over 8 reads: the first redo after new work, then one with new work after each call.
    h.scripted.push(...repeat(8, read), fresh(), ...repeat(8, read), fresh(), ...repeat(8, (i) => [read(i), fresh()]).flat(), done('ok'))
    await prompt(agent, 'go')
    expect(pluginMessages(h.records(agent), 'loop-guard')).toEqual([])
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'completed' }])
  })

  it('with blockRepetition 1, the first redo is stopped; with blockLimit 0 only hints come', async () => {
    await h.load(loopGuard, { blockRepetition: 1, blockLimit: 0 })
    const agent = await h.createAgent()
    h.scripted.push(...repeat(2, () => repeat(8, (i) => read(i))).flat(), done('ok'))
    await prompt(agent, 'go')
    expect(stopped(agent)).toEqual([])
    expect(pluginMessages(h.records(agent), 'loop-guard').map((t) => /each of the last (\d+) calls/.exec(t)?.[1])).toEqual(['2', '4', '6', '8'])
  })

  it('a stop must come after its hint', async () => {
    await expect(h.load(loopGuard, { blockHint: 4, blockLimit: 4 })).rejects.toThrow(/blockLimit must be greater than blockHint \(4\)/)
  })
})
