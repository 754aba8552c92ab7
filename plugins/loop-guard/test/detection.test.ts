import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import * as loopGuard from '@goalkeeper/loop-guard'
import { call, done, harnessWith, outcomes, pluginMessages, prompt, repeat, tools, type Harness } from '@goalkeeper/test-kit'

let h: Harness
beforeEach(async () => { h = await harnessWith({ 'a.txt': 'alpha\n', 'b.txt': 'beta\n', 'c.txt': 'gamma\n' }) })
afterEach(() => h.dispose())

const read = (file: string) => call('read_file', { path: file })

/** A `job_status` tool whose answers come from a list, so a test controls when the result changes. */
function registerStatusTool(answers: string[]) {
  let i = 0
  return h.root.tools.register({
    name: 'job_status',
    description: 'status of the build job',
    parameters: { type: 'object', properties: { job: { type: 'string' } }, required: ['job'] },
    execute: () => answers[Math.min(i++, answers.length - 1)],
  })
}

describe('loop-guard detection', () => {
  it('counts an A-B cycle in full repetitions and hints at the third', async () => {
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    h.scripted.push(tools(read('a.txt')), tools(read('b.txt')), tools(read('a.txt')), tools(read('b.txt')), tools(read('a.txt')))
    h.scripted.push(() => {
      // Two full repetitions so far: no hint yet.
      expect(pluginMessages(h.records(agent), 'loop-guard')).toEqual([])
      return tools(read('b.txt'))
    }, done())
    await prompt(agent, 'go')
    const hints = pluginMessages(h.records(agent), 'loop-guard')
    expect(hints).toEqual([
      'Loop guard: the same sequence of 2 tool calls (`read_file` {"path":"a.txt"} -> `read_file` {"path":"b.txt"}) was repeated 3 times in a row. '
      + 'The cycle is not making progress. Do not repeat this sequence: use the results you already have, change the arguments, or take a different step.',
    ])
  })

  it('detects an A-B-C cycle, also when its calls arrive batched in one step', async () => {
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    const abc = [read('a.txt'), read('b.txt'), read('c.txt')]
    h.scripted.push(tools(...abc), tools(...abc), tools(...abc, ...abc, ...abc))
    await prompt(agent, 'go')
    expect(pluginMessages(h.records(agent), 'loop-guard').at(-1)).toMatch(/^Loop guard stopped this turn: the same sequence of 3 tool calls .* was repeated 5 times in a row\./)
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'aborted', cause: 'policy' }])
  })

  it('reports a cycle under its shortest period when a longer period is watched too', async () => {
    await h.load(loopGuard, { maxCyclePeriod: 4, softThreshold: 2, hardThreshold: 0 })
    const agent = await h.createAgent()
    for (let i = 0; i < 4; i++) h.scripted.push(tools(read('a.txt')), tools(read('b.txt')))
    h.scripted.push(done())
    await prompt(agent, 'go')
    // A-B-A-B-A-B-A-B is the 2-call cycle repeated 4 times, not a 4-call cycle repeated twice.
    expect(pluginMessages(h.records(agent), 'loop-guard').map((t) => t.match(/sequence of (\d+) tool calls .* repeated (\d+) times/)?.slice(1)))
      .toEqual([['2', '2'], ['2', '4']])
  })

  it('detects the same call failing with the same error even when other calls come between', async () => {
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    h.scripted.push(
      tools(read('missing.txt')), tools(call('list_dir', { path: '.' })),
      tools(read('missing.txt')), tools(read('a.txt')),
      tools(read('missing.txt')), done(),
    )
    await prompt(agent, 'go')
    const [hint] = pluginMessages(h.records(agent), 'loop-guard')
    expect(hint).toMatch(/^Loop guard: `read_file` \{"path":"missing.txt"\} failed 3 times with the same error: NOT_FOUND: /)
    expect(hint).toContain('Retrying the identical call will fail the same way.')
  })

  it('a success of the failing call clears its same-error count', async () => {
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    h.scripted.push(
      tools(read('later.txt')), tools(call('list_dir', { path: '.' })),
      tools(read('later.txt')), tools(call('write_file', { path: 'later.txt', content: 'x' })),
      tools(read('later.txt')), tools(call('write_file', { path: 'other.txt', content: 'x' })),
      tools(read('missing.txt')), done(),
    )
    await prompt(agent, 'go')
    expect(pluginMessages(h.records(agent), 'loop-guard')).toEqual([])
  })

  it('does not flag a poll tool while its result changes, and counts it once the result stops changing', async () => {
    registerStatusTool(['queued', 'running 10%', 'running 50%', 'running 90%', 'done', 'done', 'done'])
    await h.load(loopGuard, { poll: ['job_*'] })
    const agent = await h.createAgent()
    for (let i = 0; i < 7; i++) h.scripted.push(tools(call('job_status', { job: 'build' })))
    h.scripted.push(done())
    await prompt(agent, 'wait for the build')
    expect(pluginMessages(h.records(agent), 'loop-guard')).toEqual([
      'Loop guard: `job_status` {"job":"build"} was polled 3 times in a row with the same arguments and its result did not change. '
      + 'Polling again right away is unlikely to change it. Do other useful work first, or report the current state and stop calling tools.',
    ])
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'completed' }])
  })

  it('words a poll streak of failures with changing errors truthfully (a failure is never progress)', async () => {
    let attempt = 0
    h.root.tools.register({
      name: 'job_status', description: 'status of the build job',
      parameters: { type: 'object', properties: { job: { type: 'string' } }, required: ['job'] },
      execute: () => ({ ok: false, content: '', error: { code: 'JOB_UNREACHABLE', message: `attempt ${++attempt}: no answer` } }),
    })
    await h.load(loopGuard, { poll: ['job_*'] })
    const agent = await h.createAgent()
    h.scripted.push(...repeat(3, () => tools(call('job_status', { job: 'build' }))), done())
    await prompt(agent, 'wait for the build')
    const [hint] = pluginMessages(h.records(agent), 'loop-guard')
    expect(hint).toMatch(/^Loop guard: `job_status` \{"job":"build"\} was polled 3 times in a row with the same arguments and kept failing or returning the same result\. /)
  })

  it('without poll mode the same changing calls are repetition', async () => {
    registerStatusTool(['queued', 'running 10%', 'running 50%', 'running 90%', 'done'])
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    for (let i = 0; i < 5; i++) h.scripted.push(tools(call('job_status', { job: 'build' })))
    await prompt(agent, 'wait for the build')
    expect(pluginMessages(h.records(agent), 'loop-guard')[0]).toMatch(/was called 3 times in a row with the same arguments\. Repeating the identical call is not making progress/)
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'aborted', cause: 'policy' }])
  })

  it('excluded tools are transparent: they neither count nor break a streak', async () => {
    await h.load(loopGuard, { exclude: ['list_*'] })
    const agent = await h.createAgent()
    const list = call('list_dir', { path: '.' })
    h.scripted.push(tools(read('a.txt')), tools(list), tools(read('a.txt')), tools(list, list, list), tools(read('a.txt')), tools(list, list), done())
    await prompt(agent, 'go')
    const hints = pluginMessages(h.records(agent), 'loop-guard')
    expect(hints).toHaveLength(1)
    expect(hints[0]).toContain('`read_file` {"path":"a.txt"} was called 3 times in a row')
  })

  it('exclusion patterns are wildcards where only * is special', async () => {
    await h.load(loopGuard, { exclude: ['read.file'] })
    const agent = await h.createAgent()
    h.scripted.push(tools(read('a.txt')), tools(read('a.txt')), tools(read('a.txt')), done())
    await prompt(agent, 'go')
    // `.` is a literal dot, so `read_file` is still tracked.
    expect(pluginMessages(h.records(agent), 'loop-guard')).toHaveLength(1)
  })

  it('resets on a real human message, so counts never carry across human turns', async () => {
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    h.scripted.push(tools(read('a.txt')), tools(read('a.txt')), done('first'))
    await prompt(agent, 'first')
    h.scripted.push(tools(read('a.txt')), tools(read('a.txt')), done('second'))
    await prompt(agent, 'second')
    expect(pluginMessages(h.records(agent), 'loop-guard')).toEqual([])
  })

  it('does not reset on a plugin message steered into the running turn', async () => {
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    h.scripted.push(tools(read('a.txt')), tools(read('a.txt')), () => {
      agent.steer({ content: 'a.txt changed, read it again', source: { kind: 'plugin', name: 'watcher' } })
      return tools(read('a.txt'))
    }, tools(read('a.txt')), tools(read('a.txt')), done())
    await prompt(agent, 'go')
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'aborted', cause: 'policy' }])
  })

  it('does not reset on a plugin-sourced turn', async () => {
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    h.scripted.push(tools(read('a.txt')), tools(read('a.txt')), done('first'))
    await prompt(agent, 'first')
    h.scripted.push(tools(read('a.txt')), done('second'), done('after hint'))
    await prompt(agent, 'automation', { kind: 'plugin', name: 'scheduler' })
    expect(pluginMessages(h.records(agent), 'loop-guard')).toHaveLength(1)
  })

  it('never flags distinct calls, however many (no per-tool cap)', async () => {
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    h.scripted.push(...Array.from({ length: 16 }, (_, i) => tools(read(`file-${i}.txt`))), done())
    await prompt(agent, 'read them all')
    expect(pluginMessages(h.records(agent), 'loop-guard')).toEqual([])
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'completed' }])
  })

  it('keeps state per agent', async () => {
    await h.load(loopGuard, {})
    const a = await h.createAgent()
    const b = await h.createAgent()
    h.scripted.push(tools(read('a.txt')), tools(read('a.txt')), done('a'))
    await prompt(a, 'a')
    h.scripted.push(tools(read('a.txt')), tools(read('a.txt')), done('b'))
    await prompt(b, 'b')
    expect(pluginMessages(h.records(a), 'loop-guard')).toEqual([])
    expect(pluginMessages(h.records(b), 'loop-guard')).toEqual([])
  })
})
