import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import * as noProgress from '@goalkeeper/no-progress'
import { call, done, harnessWith, outcomes, pluginMessages, prompt, repeat, type Harness } from '@goalkeeper/test-kit'
import type { ScriptResponse, ScriptToolCall } from '@goalkeeper/model'

let h: Harness
beforeEach(async () => { h = await harnessWith({ 'a.txt': 'alpha\n', 'app.conf': 'port = 8080\n' }) })
afterEach(() => h.dispose())

const said = (text: string, ...calls: ScriptToolCall[]): ScriptResponse => ({ text, toolCalls: calls })
const search = (pattern: string) => call('search', { pattern })
const toolCalls = () => h.records(h.root.agents.list()[0]).filter((r) => r.type === 'tool/call').length

describe('no-progress echo: the same text while the calls bring nothing new', () => {
  it('stops the turn at the fourth call that brought nothing, naming the text', async () => {
    await h.load(noProgress, {})
    const agent = await h.createAgent()
    h.scripted.push(...repeat(8, (i) => said('Let me search for the handler.', search(`handler_v${i}`))), done('never requested'))
    await prompt(agent, 'go')
    expect(toolCalls()).toBe(4)
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'aborted', cause: 'policy' }])
    expect(pluginMessages(h.records(agent), 'no-progress')).toEqual([
      'No-progress guard stopped this turn: the model said the same thing in 4 steps in a row ("Let me search for the handler.") while 4 tool calls '
      + 'found nothing (failures or empty results). The session is kept; a new message continues from here.',
    ])
  })

  it('counts failures too, and nearly the same text (numbers masked); a call that found something starts over', async () => {
    await h.load(noProgress, {})
    const agent = await h.createAgent()
    h.scripted.push(
      said('Attempt 1: reading the file.', call('read_file', { path: 'missing-0.txt' })),
      said('Attempt 2: reading the file.', call('read_file', { path: 'missing-1.txt' })),
      said('Attempt 3: reading the file.', call('read_file', { path: 'a.txt' }), call('read_file', { path: 'missing-2.txt' })),
      said('Attempt 4: reading the file.', call('read_file', { path: 'missing-3.txt' }), call('search', { pattern: 'nothing here' })),
      said('Attempt 5: reading the file.', call('read_file', { path: 'missing-4.txt' })),
      said('Attempt 6: reading the file.', call('read_file', { path: 'missing-5.txt' })),
      done('never requested'),
    )
    await prompt(agent, 'go')
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'aborted', cause: 'policy' }])
    expect(pluginMessages(h.records(agent), 'no-progress')[0]).toMatch(/in 3 steps in a row \("Attempt 6: reading the file\."\) while 4 tool calls found nothing/)
  })

  it('leaves an explorer alone: three names tried with the same words, then the one that exists', async () => {
    await h.load(noProgress, {})
    const agent = await h.createAgent()
    const look = (path: string) => said('Looking for the config file.', call('read_file', { path }))
    h.scripted.push(look('config.json'), look('config.yaml'), look('app.toml'), look('app.conf'), look('app.conf.bak'), done('Found it: port 8080.'))
    await prompt(agent, 'go')
    expect(pluginMessages(h.records(agent), 'no-progress')).toEqual([])
    expect(outcomes(h.records(agent))).toEqual([{ kind: 'completed' }])
  })

  it('does not count steps without text, or whose text changes', async () => {
    await h.load(noProgress, {})
    const agent = await h.createAgent()
    h.scripted.push(
      ...repeat(5, (i) => said('', search(`nothing_${i}`))),
      ...['First the handlers.', 'Then the routes.', 'Maybe the middleware?', 'Or the config.', 'Last, the tests.'].map((text, i) => said(text, search(`none_${i}`))),
      done('Nothing of it exists.'),
    )
    await prompt(agent, 'go')
    expect(pluginMessages(h.records(agent), 'no-progress')).toEqual([])
  })

  it('is off with echo 0', async () => {
    await h.load(noProgress, { echo: 0 })
    const agent = await h.createAgent()
    h.scripted.push(...repeat(6, (i) => said('Searching.', search(`gone_${i}`))), done('Not found.'))
    await prompt(agent, 'go')
    expect(pluginMessages(h.records(agent), 'no-progress')).toEqual([])
    expect(toolCalls()).toBe(6)
  })
})
