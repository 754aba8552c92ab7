import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import * as loopGuard from '@goalkeeper/loop-guard'
import { call, done, harnessWith, outcomes, pluginMessages, prompt, repeat, tools, type Harness } from '@goalkeeper/test-kit'

let h: Harness
const files = Object.fromEntries(['a', 'b', 'c', 'd', 'e', 'f'].map((n) => [`${n}.txt`, `${n}\n`]))
beforeEach(async () => { h = await harnessWith(files) })
afterEach(() => h.dispose())

const read = (file: string) => call('read_file', { path: file })
const stopped = (agent: Parameters<Harness['records']>[0]) => pluginMessages(h.records(agent), 'loop-guard').filter((t) => t.startsWith('Loop guard stopped'))

/** A tool whose answers come from a list (the last one repeats), so a test controls when the result changes. */
function registerTool(name: string, answers: string[]) {
  let i = 0
  return h.root.tools.register({
    name,
    description: `${name} of the build job`,
    parameters: { type: 'object', properties: { job: { type: 'string' } } },
    execute: () => answers[Math.min(i++, answers.length - 1)],
  })
}
const job = (name = 'job_status') => tools(call(name, { job: 'build' }))

describe('loop-guard cycles', () => {
  it('hints at the second call that repeats the call one period earlier and stops at the fourth (A-B the third time through)', async () => {
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    h.scripted.push(...repeat(4, (i) => tools(read(i % 2 ? 'b.txt' : 'a.txt'))))
    h.scripted.push(() => {
      expect(pluginMessages(h.records(agent), 'loop-guard')).toEqual([
        'Loop guard: a cycle of 2 tool calls (`read_file` {"path":"a.txt"} -> `read_file` {"path":"b.txt"}) is being repeated with the same results: '
        + 'each of the last 2 calls repeated the call made 2 calls earlier. '
        + 'The cycle is not making progress. Do not repeat this sequence: use the results you already have, change the arguments, or take a different step.',
      ])
      return tools(read('a.txt'))
    }, tools(read('b.txt')), done())
    await prompt(agent, 'go')
    expect(h.scripted.requests).toHaveLength(6)
    expect(stopped(agent)).toEqual([
      'Loop guard stopped this turn: a cycle of 2 tool calls (`read_file` {"path":"a.txt"} -> `read_file` {"path":"b.txt"}) is being repeated with the same results: '
      + 'each of the last 4 calls repeated the call made 2 calls earlier. The session is kept; a new message continues from here.',
    ])
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'aborted', cause: 'policy' }])
  })

  for (const period of [3, 4, 6]) {
    it(`stops a cycle of ${period} calls after 4 repeated calls`, async () => {
      await h.load(loopGuard, {})
      const agent = await h.createAgent()
      const names = Object.keys(files).slice(0, period)
      h.scripted.push(...repeat(period * 3, (i) => tools(read(names[i % period]))), done())
      await prompt(agent, 'go')
      expect(h.scripted.requests).toHaveLength(period + 4)
      expect(stopped(agent)[0]).toContain(`a cycle of ${period} tool calls`)
    })
  }

  it('counts calls batched in one step one by one, in model order', async () => {
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    const abc = [read('a.txt'), read('b.txt'), read('c.txt')]
    h.scripted.push(tools(...abc), tools(...abc), tools(...abc), done())
    await prompt(agent, 'go')
    expect(h.scripted.requests).toHaveLength(3)
    expect(stopped(agent)[0]).toMatch(/a cycle of 3 tool calls .* each of the last 6 calls repeated the call made 3 calls earlier/)
  })

  it('reports a cycle under its shortest period when a longer one is watched too', async () => {
    // Block stops off too: A-B done a third and fourth time is also a redone block.
    await h.load(loopGuard, { cycleHint: 2, cycleLimit: 0, blockLimit: 0 })
    const agent = await h.createAgent()
    h.scripted.push(...repeat(8, (i) => tools(read(i % 2 ? 'b.txt' : 'a.txt'))), done())
    await prompt(agent, 'go')
    expect(pluginMessages(h.records(agent), 'loop-guard').map((t) => t.match(/cycle of (\d+) tool calls .* last (\d+) calls/)?.slice(1)))
      .toEqual([['2', '2'], ['2', '4'], ['2', '6']])
  })

  it('is not a cycle when the results change: a two-step loop whose results both change runs on', async () => {
    registerTool('build_step', repeat(8, (i) => `built revision ${i}`))
    registerTool('test_step', repeat(8, (i) => `${i} of 8 suites pass`))
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    h.scripted.push(...repeat(6, () => [job('build_step'), job('test_step')]).flat(), done())
    await prompt(agent, 'go')
    expect(pluginMessages(h.records(agent), 'loop-guard')).toEqual([])
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'completed' }])
  })
})

describe('loop-guard same error', () => {
  it('counts the same call failing the same way even with other calls between: hint at 2, stop at 4', async () => {
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    h.scripted.push(
      tools(read('missing.txt')), tools(call('list_dir', { path: '.' })),
      tools(read('missing.txt')), tools(read('a.txt')),
      tools(read('missing.txt')), tools(read('b.txt')),
      tools(read('missing.txt')), done(),
    )
    await prompt(agent, 'go')
    expect(h.scripted.requests).toHaveLength(7)
    const [hint, stop] = pluginMessages(h.records(agent), 'loop-guard')
    expect(hint).toBe('Loop guard: `read_file` {"path":"missing.txt"} failed 2 times with the same error: NOT_FOUND: "missing.txt" does not exist. '
      + 'Use list_dir or search to find the right path. Retrying the identical call will fail the same way. '
      + 'Read the error and fix its cause (arguments, paths, preconditions) before calling again, or take a different approach.')
    expect(stop).toMatch(/^Loop guard stopped this turn: `read_file` \{"path":"missing.txt"\} failed 4 times with the same error: NOT_FOUND: /)
  })

  it('ignores the duration in the exit footer, so the same failing command always matches', async () => {
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    // Each run sleeps a little longer, so the `[Exit code 1 after S s.]` footer differs every time.
    const command = 'n=$(cat n 2>/dev/null || echo 0); echo $((n+1)) > n; sleep 0.$((n*2)); echo "3 tests failed"; exit 1'
    h.scripted.push(...repeat(5, () => tools(call('run_command', { command }))), done())
    await prompt(agent, 'go')
    expect(h.scripted.requests).toHaveLength(4)
    const footers = h.records(agent).flatMap((r) => r.type === 'tool/result' ? [(r.data as { content: string }).content.split('\n').at(-1)] : [])
    expect(new Set(footers).size).toBeGreaterThan(1)
    expect(stopped(agent)[0]).toMatch(/failed 4 times with the same error: COMMAND_FAILED: The command exited with code 1\./)
  })

  it('starts over after a successful write, and when the failing call succeeds', async () => {
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    const check = tools(call('run_command', { command: 'test -f flag' }))
    h.scripted.push(
      tools(read('later.txt')), tools(call('write_file', { path: 'other.txt', content: 'x' })),
      tools(read('later.txt')), tools(call('edit_file', { path: 'other.txt', old_string: 'x', new_string: 'y' })),
      tools(read('later.txt')),
      check, tools(call('run_command', { command: 'touch flag' })), check,
      tools(call('run_command', { command: 'rm flag' })), check,
      done(),
    )
    await prompt(agent, 'go')
    expect(pluginMessages(h.records(agent), 'loop-guard')).toEqual([])
  })
})

describe('loop-guard and what tools say of themselves', () => {
  it('a write is a call of a tool that declares the kind edit: it starts the same-error count over, a tool of another kind does not', async () => {
    await h.load(loopGuard, {})
    const schema = { type: 'object', properties: { file: { type: 'string' } } }
    h.root.tools.register({ name: 'patch', kind: 'edit', description: 'patches', parameters: schema, execute: (args: { file: string }) => `patched ${args.file}` })
    h.root.tools.register({ name: 'note', description: 'notes', parameters: schema, execute: (args: { file: string }) => `noted ${args.file}` })
    const between = (tool: string) => [tools(read('later.txt')), tools(call(tool, { file: 'x' })), tools(read('later.txt')), tools(call(tool, { file: 'y' })), tools(read('later.txt')), done()]
    const patched = await h.createAgent()
    h.scripted.push(...between('patch'))
    await prompt(patched, 'go')
    expect(pluginMessages(h.records(patched), 'loop-guard')).toEqual([])
    const noted = await h.createAgent()
    h.scripted.push(...between('note'))
    await prompt(noted, 'go')
    expect(pluginMessages(h.records(noted), 'loop-guard')).toEqual([expect.stringContaining('later.txt')])
  })
})

describe('loop-guard near-identical calls', () => {
  it('counts calls that differ only in numbers or a timestamp comment, with the same result, as repeats', async () => {
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    h.scripted.push(
      ...repeat(3, (i) => tools(call('read_file', { path: 'a.txt', end_line: 10 + i }))),
      ...repeat(5, (i) => tools(call('run_command', { command: `cat a.txt  # checked at 2024-05-01T10:00:0${i}Z`, timeout_ms: 1000 * (i + 1) }))),
      done(),
    )
    await prompt(agent, 'go')
    const messages = pluginMessages(h.records(agent), 'loop-guard')
    expect(messages[0]).toBe('Loop guard: `read_file` {"end_line":12,"path":"a.txt"} was called 3 times in a row with nearly the same arguments '
      + '(only numbers, comments or spacing differed) and returned the same result each time. Repeating it will return the same result again: '
      + 'use the result you already have. Do not make this call again. If you need something else, change what you ask for or use a different tool; '
      + 'if the task is finished or cannot be finished, stop calling tools and say so.')
    expect(stopped(agent)[0]).toMatch(/^Loop guard stopped this turn: `run_command` \{"command":"cat a.txt # checked at 2024-05-01T10:00:04Z","timeout_ms":5000\} was called 5 times in a row with nearly the same arguments/)
    expect(h.scripted.requests).toHaveLength(8)
  })

  it('treats near-identical calls with different results as different calls (paging through a file)', async () => {
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    h.scripted.push(tools(call('write_file', { path: 'long.txt', content: repeat(80, (i) => `line ${i}`).join('\n') })))
    h.scripted.push(...repeat(8, (i) => tools(call('read_file', { path: 'long.txt', start_line: 1 + 10 * i, end_line: 10 + 10 * i }))), done())
    await prompt(agent, 'go')
    expect(pluginMessages(h.records(agent), 'loop-guard')).toEqual([])
  })

  it('with argumentSimilarity set, counts consecutive calls whose arguments are that alike, with the same result', async () => {
    await h.load(loopGuard, { argumentSimilarity: 0.9 })
    const agent = await h.createAgent()
    const variants = ['ls -la', 'ls -al', 'ls -a -l', 'ls -l -a', 'ls -la']
    h.scripted.push(...variants.map((command) => tools(call('run_command', { command }))), done())
    await prompt(agent, 'go')
    expect(stopped(agent)[0]).toMatch(/was called 5 times in a row with nearly the same arguments/)
  })

  it('by default, similar arguments are different calls: files named alike with the same contents are read in a row', async () => {
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    h.scripted.push(...repeat(6, (i) => tools(call('write_file', { path: `test${i + 1}.txt`, content: 'fixture' }))))
    h.scripted.push(...repeat(6, (i) => tools(read(`test${i + 1}.txt`))), done())
    await prompt(agent, 'go')
    expect(pluginMessages(h.records(agent), 'loop-guard')).toEqual([])
  })

  it('with nearIdentical off, only exact repeats count', async () => {
    await h.load(loopGuard, { nearIdentical: false })
    const agent = await h.createAgent()
    h.scripted.push(...repeat(5, (i) => tools(call('read_file', { path: 'a.txt', end_line: 10 + i }))), done())
    await prompt(agent, 'go')
    expect(pluginMessages(h.records(agent), 'loop-guard')).toEqual([])
  })
})

describe('loop-guard polling', () => {
  it('does not stop a call polled 10 times while its result changes (default config)', async () => {
    registerTool('job_status', repeat(10, (i) => `build running: step ${i + 1} of 12`))
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    h.scripted.push(...repeat(10, () => job()), done())
    await prompt(agent, 'wait for the build')
    expect(pluginMessages(h.records(agent), 'loop-guard')).toEqual([])
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'completed' }])
  })

  it('bounds polling separately: a hint at pollHint, a stop at pollLimit', async () => {
    registerTool('job_status', repeat(10, (i) => `build running: step ${i + 1} of 12`))
    await h.load(loopGuard, { pollHint: 4, pollLimit: 6 })
    const agent = await h.createAgent()
    h.scripted.push(...repeat(8, () => job()), done())
    await prompt(agent, 'wait for the build')
    expect(h.scripted.requests).toHaveLength(6)
    expect(pluginMessages(h.records(agent), 'loop-guard')).toEqual([
      'Loop guard: `job_status` {"job":"build"} was called 4 times in a row with the same arguments while its result kept changing. '
      + 'This looks like waiting for something to finish. After 6 calls in a row the run is stopped. '
      + 'Wait inside one call instead (a command that waits until the job ends, a longer timeout), do other useful work in between, '
      + 'or report the current state and stop calling tools.',
      'Loop guard stopped this turn: `job_status` {"job":"build"} was called 6 times in a row with the same arguments while its result kept changing. '
      + 'The session is kept; a new message continues from here.',
    ])
  })

  it('counts repeats again once the result stops changing', async () => {
    registerTool('job_status', ['queued', 'running 10%', 'running 50%', 'done'])
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    h.scripted.push(...repeat(6, () => job()), done())
    await prompt(agent, 'wait for the build')
    expect(pluginMessages(h.records(agent), 'loop-guard')).toEqual([expect.stringMatching(
      /^Loop guard: `job_status` \{"job":"build"\} was called 3 times in a row with the same arguments and returned the same result each time\./,
    )])
  })

  it('a tool in `poll` is bounded only by pollLimit, its result changed or not', async () => {
    registerTool('job_status', ['running'])
    await h.load(loopGuard, { poll: ['job_*'], pollHint: 4, pollLimit: 6 })
    const agent = await h.createAgent()
    h.scripted.push(...repeat(8, () => job()), done())
    await prompt(agent, 'wait for the build')
    expect(h.scripted.requests).toHaveLength(6)
    expect(pluginMessages(h.records(agent), 'loop-guard').map((t) => t.match(/called (\d+) times in a row with the same arguments while/)?.[1]))
      .toEqual(['4', '6'])
  })

  it('never counts a failure as progress, whatever its text', async () => {
    let attempt = 0
    h.root.tools.register({
      name: 'job_status', description: 'status of the build job',
      parameters: { type: 'object', properties: { job: { type: 'string' } } },
      execute: () => ({ ok: false, content: '', error: { code: 'JOB_UNREACHABLE', message: `attempt ${++attempt}: no answer` } }),
    })
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    h.scripted.push(...repeat(3, () => job()), done())
    await prompt(agent, 'wait for the build')
    expect(pluginMessages(h.records(agent), 'loop-guard')).toEqual([expect.stringMatching(
      /^Loop guard: `job_status` \{"job":"build"\} was called 3 times in a row with the same arguments\. Repeating the identical call is not making progress/,
    )])
  })
})

describe('loop-guard tracking', () => {
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

  it('does not reset on a human message: the streak carries into the next human turn', async () => {
    await h.load(loopGuard, {})
    const agent = await h.createAgent()
    h.scripted.push(tools(read('a.txt')), tools(read('a.txt')), done('first'))
    await prompt(agent, 'first')
    h.scripted.push(tools(read('a.txt')), done('second'), done('after the hint'))
    await prompt(agent, 'second')
    expect(pluginMessages(h.records(agent), 'loop-guard')).toEqual([expect.stringContaining('was called 3 times in a row')])
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
