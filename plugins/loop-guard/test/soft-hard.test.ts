import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import * as loopGuard from '@goalkeeper/loop-guard'
import { call, done, harnessWith, outcomes, pluginMessages, prompt, readA, repeat, tools, userTexts, type Harness } from '@goalkeeper/test-kit'

let h: Harness
beforeEach(async () => { h = await harnessWith({ 'a.txt': 'alpha\n' }) })
afterEach(() => h.dispose())

describe('loop-guard soft hint and hard stop', () => {
  it('steers a hint naming the tool, the count and the arguments into the next model request', async () => {
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    h.scripted.push(...repeat(3, readA), done())
    await prompt(agent, 'read a.txt')

    expect(h.scripted.requests).toHaveLength(4)
    const before = userTexts(h.scripted.requests[2]).join('\n')
    expect(before).not.toContain('Loop guard')
    const hint = userTexts(h.scripted.requests[3]).at(-1)!
    expect(hint).toBe(
      'Loop guard: `read_file` {"path":"a.txt"} was called 3 times in a row with the same arguments and returned the same result each time. '
      + 'Repeating it will return the same result again: use the result you already have. Do not make this call again. '
      + 'If you need something else, change what you ask for or use a different tool; if the task is finished or cannot be finished, stop calling tools and say so.',
    )
    expect(pluginMessages(h.records(agent), 'loop-guard')).toEqual([hint])
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'completed' }])
  })

  it('treats key order, volatile keys, whitespace and path spelling as the same call', async () => {
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    h.scripted.push(
      tools(call('read_file', { path: 'a.txt', offset: 1, task_progress: 'step 1' })),
      tools(call('read_file', { offset: 1, path: './a.txt', task_progress: 'step 2' })),
      tools(call('read_file', { task_progress: '3', offset: 1, path: ' a.txt ' })),
      done(),
    )
    await prompt(agent, 'go')
    expect(userTexts(h.scripted.requests[3]).at(-1)).toContain('`read_file` {"offset":1,"path":"a.txt"} was called 3 times in a row')
  })

  it('fires the soft hint again every softThreshold repeats, not only once', async () => {
    await h.load(loopGuard, { softThreshold: 2, hardThreshold: 0 })
    const agent = await h.createAgent()
    h.scripted.push(...repeat(6, () => tools(call('list_dir', { path: '.' }))), done())
    await prompt(agent, 'list')
    const hints = pluginMessages(h.records(agent), 'loop-guard')
    expect(hints.map((t) => t.match(/called (\d+) times/)?.[1])).toEqual(['2', '4', '6'])
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'completed' }])
  })

  it('stops at the hard threshold outside a goal: a plugin message, then a policy cancel of that turn', async () => {
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    h.scripted.push(...repeat(6, readA), done())
    await prompt(agent, 'read a.txt')

    // The sixth scripted call is never requested: the stop lands before the next model call.
    expect(h.scripted.requests).toHaveLength(5)
    const records = h.records(agent)
    expect(outcomes(records)).toEqual([{ kind: 'aborted', cause: 'policy' }])
    const messages = pluginMessages(records, 'loop-guard')
    expect(messages).toHaveLength(2)
    expect(messages[1]).toBe(
      'Loop guard stopped this turn: `read_file` {"path":"a.txt"} was called 5 times in a row with the same arguments and returned the same result each time.'
      + ' The session is kept; a new message continues from here.',
    )
    // The stop message is recorded inside the turn, before its turn/end.
    const stopAt = records.findIndex((r) => r.type === 'user/message' && (r.data as any).content[0].text === messages[1])
    expect(stopAt).toBeLessThan(records.findIndex((r) => r.type === 'turn/end'))
  })

  it('does not leave the streak at the hard threshold after a stop', async () => {
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    h.scripted.push(...repeat(5, readA))
    await prompt(agent, 'read a.txt')
    h.scripted.push(readA(), done('read once'))
    await prompt(agent, 'automation', { kind: 'plugin', name: 'scheduler' })
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'aborted', cause: 'policy' }, { kind: 'completed' }])
  })

  it('hashes unparsable arguments by their raw text, so different malformed calls never collide', async () => {
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    h.scripted.push(
      tools(call('read_file', '{"path": "a.txt"')),
      tools(call('read_file', '{"path": "b.txt"')),
      tools(call('read_file', '{"path": "c.txt"')),
      tools(call('read_file', '{"path": "c.txt"')),
      done(),
    )
    await prompt(agent, 'go')
    // Only the two c.txt calls are the same call: the hint comes at the second of them, not before.
    const hints = pluginMessages(h.records(agent), 'loop-guard')
    expect(hints).toHaveLength(1)
    expect(hints[0]).toContain('`read_file` {"path": "c.txt" (not valid JSON) failed 2 times with the same error: INVALID_JSON')
  })

  it('never lets arguments that JSON cannot round-trip share a signature (a __proto__ key, out-of-range numbers)', async () => {
    // Exact signatures only: near-identical matching would rightly merge 1e400 and -1e400 (both numbers, same error).
    await h.load(loopGuard, { nearIdentical: false })
    const agent = await h.createAgent()
    const raw = (text: string) => tools(call('read_file', text))
    h.scripted.push(raw('{"path":"a.txt"}'), raw('{"path":"a.txt","__proto__":{"x":1}}'), raw('{"path":"a.txt"}'), done())
    await prompt(agent, 'prototype key')
    h.scripted.push(raw('{"path":"a.txt","end_line":null}'), raw('{"path":"a.txt","end_line":1e400}'), raw('{"path":"a.txt","end_line":-1e400}'), done())
    await prompt(agent, 'infinite numbers')
    expect(pluginMessages(h.records(agent), 'loop-guard')).toEqual([])
  })

  it('compares arguments nested too deeply to walk by their raw text, without failing', async () => {
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    const deep = `{"path":"a.txt","x":${'['.repeat(20_000)}${']'.repeat(20_000)}}`
    h.scripted.push(...repeat(2, () => tools(call('read_file', deep))), done())
    await prompt(agent, 'go')
    expect(h.errors()).toEqual([])
    const hints = pluginMessages(h.records(agent), 'loop-guard')
    expect(hints).toHaveLength(1)
    expect(hints[0]).toMatch(/^Loop guard: `read_file` \{"path":"a\.txt","x":\[\[\[.*\(\d+ more characters\) failed 2 times with the same error: INVALID_ARGUMENTS: /)
  })
})
