import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import * as mistakeLimit from '@goalkeeper/mistake-limit'
import { call, done, harnessWith, outcomes, pluginMessages, prompt, tools, type Harness } from '@goalkeeper/test-kit'

let h: Harness
beforeEach(async () => { h = await harnessWith({ 'a.txt': 'alpha\n' }) })
afterEach(() => h.dispose())

let missing = 0
const fail = () => call('read_file', { path: `missing-${++missing}.txt` })
const ok = () => call('read_file', { path: 'a.txt' })
let fixes = 0
/** A success that changes something: a write. */
const fix = () => call('write_file', { path: `fix-${++fixes}.txt`, content: `fix ${fixes}\n` })

/** A tool that fails with the given error code, like an approval layer or a rate-limited API would. */
function registerFailingTool(code: string) {
  h.root.tools.register({
    name: 'deploy', description: 'deploys', parameters: { type: 'object', properties: {} },
    execute: () => ({ ok: false, content: '', error: { code, message: `refused (${code})` } }),
  })
}

describe('mistake-limit counting', () => {
  it('stops after `limit` consecutive failing steps, with an explanatory plugin message', async () => {
    await h.load(mistakeLimit, { limit: 3 })
    const agent = await h.createAgent()
    h.scripted.push(tools(fail()), tools(fail()), tools(call('read_file', { path: 'gone.txt' })), done())
    await prompt(agent, 'go')

    expect(h.scripted.requests).toHaveLength(3)
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'aborted', cause: 'policy' }])
    const [message] = pluginMessages(h.records(agent), 'mistake-limit')
    expect(message).toMatch(/^Mistake limit stopped this turn: 3 consecutive steps in which every tool call failed \(limit 3\)\. Last errors: `read_file` NOT_FOUND: .*; `read_file` NOT_FOUND: "gone\.txt" does not exist\. Use list_dir or search to find the right path\. The session is kept; a new message continues from here\.$/)
  })

  it('a step in which any tool succeeded resets the count', async () => {
    await h.load(mistakeLimit, { limit: 3 })
    const agent = await h.createAgent()
    h.scripted.push(tools(fail()), tools(fail()), tools(fail(), ok()), tools(fail()), tools(fail()), done())
    await prompt(agent, 'go')
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'completed' }])
    expect(pluginMessages(h.records(agent), 'mistake-limit')).toEqual([])
  })

  it('carries the count across non-human turns (a goal round or automation is not human input)', async () => {
    await h.load(mistakeLimit, { limit: 3 })
    const agent = await h.createAgent()
    h.scripted.push(tools(fail()), tools(fail()), done('gave up'))
    await prompt(agent, 'go')
    h.scripted.push(tools(fail()), done())
    await prompt(agent, 'next round', { kind: 'plugin', name: 'scheduler' })
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'completed' }, { kind: 'aborted', cause: 'policy' }])
  })

  it('ignores infrastructure errors: they neither count nor reset', async () => {
    registerFailingTool('DENIED')
    await h.load(mistakeLimit, { limit: 2 })
    const agent = await h.createAgent()
    h.scripted.push(tools(fail()), tools(call('deploy')), tools(call('deploy')), tools(fail()), done())
    await prompt(agent, 'go')
    expect(h.scripted.requests).toHaveLength(4)
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'aborted', cause: 'policy' }])
  })

  it('by default ignores sandbox denials and the API failure codes a tool may pass on', async () => {
    const codes = ['PERMISSION_DENIED', 'RATE_LIMIT', 'QUOTA', 'SERVER', 'TRANSPORT', 'DENIED', 'ABORTED']
    for (const code of codes) {
      h.root.tools.register({
        name: `call_${code.toLowerCase()}`, description: 'fails', parameters: { type: 'object', properties: {} },
        execute: () => ({ ok: false, content: '', error: { code, message: `refused (${code})` } }),
      })
    }
    await h.load(mistakeLimit, { limit: 1 })
    const agent = await h.createAgent()
    h.scripted.push(...codes.map((code) => tools(call(`call_${code.toLowerCase()}`))), done())
    await prompt(agent, 'go')
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'completed' }])
  })

  it('a single timeout is neutral; a second one before any success counts both', async () => {
    registerFailingTool('COMMAND_TIMEOUT')
    await h.load(mistakeLimit, { limit: 2 })
    const agent = await h.createAgent()
    h.scripted.push(tools(call('deploy')), tools(ok()), tools(call('deploy')), tools(fail()), done('recovered'))
    await prompt(agent, 'first')
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'completed' }])
    h.scripted.push(tools(ok()), tools(call('deploy')), tools(call('deploy')), done('never requested'))
    await prompt(agent, 'second')
    expect(h.scripted.requests).toHaveLength(8)
    expect(outcomes(h.records(agent)).at(-1)).toEqual({ kind: 'aborted', cause: 'policy' })
    expect(pluginMessages(h.records(agent), 'mistake-limit')[0]).toMatch(
      /^Mistake limit stopped this turn: 2 consecutive steps .* Last errors: `read_file` NOT_FOUND: .*; `deploy` COMMAND_TIMEOUT: refused \(COMMAND_TIMEOUT\); `deploy` COMMAND_TIMEOUT: refused \(COMMAND_TIMEOUT\)\./,
    )
  })

  it('also judges a window: 6 failed of the last 8 steps stop the run, successes in between or not', async () => {
    await h.load(mistakeLimit, {})
    const agent = await h.createAgent()
    h.scripted.push(
      tools(fail()), tools(fail()), tools(fix()), tools(fail()), tools(fail()), tools(fix()),
      tools(fail()), tools(fail()), done('never requested'),
    )
    await prompt(agent, 'go')
    expect(h.scripted.requests).toHaveLength(8)
    expect(pluginMessages(h.records(agent), 'mistake-limit')[0]).toMatch(
      /^Mistake limit stopped this turn: 6 of the last 8 steps that called tools failed outright \(every tool call in them failed; limit 6 of 8\)\. Last errors: /,
    )
  })

  it('lets failure alternate with success (trying and fixing) below the window limit', async () => {
    await h.load(mistakeLimit, {})
    const agent = await h.createAgent()
    h.scripted.push(...Array.from({ length: 8 }, () => [tools(fail()), tools(fix())]).flat(), done())
    await prompt(agent, 'go')
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'completed' }])
  })

  it('stops failures that alternate with successes that change nothing, at the third failure since anything changed', async () => {
    await h.load(mistakeLimit, {})
    const agent = await h.createAgent()
    // The first read of a.txt is new; every later one brings nothing new.
    h.scripted.push(...Array.from({ length: 10 }, () => [tools(ok()), tools(fail())]).flat(), done('never requested'))
    await prompt(agent, 'go')
    expect(h.scripted.requests).toHaveLength(6)
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'aborted', cause: 'policy' }])
    expect(pluginMessages(h.records(agent), 'mistake-limit')[0]).toMatch(
      /^Mistake limit stopped this turn: 3 tool calls failed in this turn since the last success that changed anything \(5 calls in all, the others succeeded without bringing anything new; limit 3\)\. Last errors: `read_file` NOT_FOUND: .*missing-/,
    )
  })

  it('counts failures in a step whose other call succeeded without bringing anything new', async () => {
    await h.load(mistakeLimit, {})
    const agent = await h.createAgent()
    h.scripted.push(tools(ok()), tools(ok(), fail(), fail()), tools(call('search', { pattern: 'nowhere' }), fail()), done('never requested'))
    await prompt(agent, 'go')
    expect(h.scripted.requests).toHaveLength(3)
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'aborted', cause: 'policy' }])
  })

  it('leaves an explorer alone: three names tried, the listing read again, then the file that exists; and starts each turn over', async () => {
    await h.load(mistakeLimit, {})
    const agent = await h.createAgent()
    const look = (path: string) => tools(call('read_file', { path }))
    // Reading a.txt again before guessing is idle, but comes before any failure.
    h.scripted.push(tools(ok()), tools(ok()), look('config.json'), look('config.yaml'), look('config.toml'), tools(call('list_dir', {})), look('a.txt'), done('a.txt it is.'))
    await prompt(agent, 'go')
    h.scripted.push(tools(fail()), tools(ok()), tools(fail()), done('Not yet.'))
    await prompt(agent, 'and the rest?')
    // Two failures with an idle success between: one more in this turn would be the third.
    h.scripted.push(tools(fail()), done('Nothing else.'))
    await prompt(agent, 'one more try')
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'completed' }, { kind: 'completed' }, { kind: 'completed' }])
    expect(pluginMessages(h.records(agent), 'mistake-limit')).toEqual([])
  })

  it('staleFailures 0 turns the rule off', async () => {
    await h.load(mistakeLimit, { staleFailures: 0 })
    const agent = await h.createAgent()
    h.scripted.push(...Array.from({ length: 6 }, () => [tools(ok()), tools(fail())]).flat(), done('done'))
    await prompt(agent, 'go')
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'completed' }])
  })

  it('counts an infrastructure code once it is removed from ignoreErrorCodes', async () => {
    registerFailingTool('DENIED')
    await h.load(mistakeLimit, { limit: 2, ignoreErrorCodes: [] })
    const agent = await h.createAgent()
    h.scripted.push(tools(fail()), tools(call('deploy')), done())
    await prompt(agent, 'go')
    expect(h.scripted.requests).toHaveLength(2)
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'aborted', cause: 'policy' }])
  })

  it('counts invalid calls (bad JSON, unknown tool) by default', async () => {
    await h.load(mistakeLimit, { limit: 2 })
    const agent = await h.createAgent()
    h.scripted.push(tools(call('read_file', '{"path":')), tools(call('no_such_tool', {})), done())
    await prompt(agent, 'go')
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'aborted', cause: 'policy' }])
    expect(pluginMessages(h.records(agent), 'mistake-limit')[0]).toContain('Last errors: `read_file` INVALID_JSON: ')
  })

  it('leaves invalid calls out when countInvalidCalls is false', async () => {
    await h.load(mistakeLimit, { limit: 2, countInvalidCalls: false })
    const agent = await h.createAgent()
    h.scripted.push(tools(call('read_file', '{"path":')), tools(call('read_file', { nope: 1 })), tools(call('no_such_tool', {})), done())
    await prompt(agent, 'go')
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'completed' }])
  })

  it('does not reset on a human message: the count carries into the next human turn', async () => {
    await h.load(mistakeLimit, { limit: 3 })
    const agent = await h.createAgent()
    h.scripted.push(tools(fail()), tools(fail()), done('giving up'))
    await prompt(agent, 'first')
    h.scripted.reset([tools(fail()), done('never requested')])
    await prompt(agent, 'try again')
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'completed' }, { kind: 'aborted', cause: 'policy' }])
  })

  it('does not reset on a plugin message steered into the running turn', async () => {
    await h.load(mistakeLimit, { limit: 3 })
    const agent = await h.createAgent()
    h.scripted.push(tools(fail()), () => {
      agent.steer({ content: 'the file is called a.txt', source: { kind: 'plugin', name: 'hints' } })
      return tools(fail())
    }, tools(fail()), done())
    await prompt(agent, 'go')
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'aborted', cause: 'policy' }])
  })

  it('does not keep the count at the limit after a stop', async () => {
    await h.load(mistakeLimit, { limit: 2 })
    const agent = await h.createAgent()
    h.scripted.push(tools(fail()), tools(fail()), done())
    await prompt(agent, 'first')
    h.scripted.reset([tools(fail()), done('recovered')])
    await prompt(agent, 'automation', { kind: 'plugin', name: 'scheduler' })
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'aborted', cause: 'policy' }, { kind: 'completed' }])
  })
})
