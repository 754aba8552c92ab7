import { writeFile } from 'node:fs/promises'
import path from 'node:path'
import * as acp from '@agentclientprotocol/sdk'
import { call, tools } from '@goalkeeper/test-kit'
import { describe, expect, it } from 'vitest'
import { setup, textOf } from './helpers.ts'

describe('initialize', () => {
  it('states what goalkeeper serves: load, list, text and embedded context, the goal extension', async () => {
    const { client } = await setup()
    const answer = await client.initialize({ fs: { readTextFile: true, writeTextFile: true } })
    expect(answer.protocolVersion).toBe(acp.PROTOCOL_VERSION)
    expect(answer.agentInfo).toEqual({ name: 'goalkeeper', title: 'goalkeeper', version: 'test' })
    expect(answer.agentCapabilities).toEqual({
      loadSession: true,
      promptCapabilities: { image: false, audio: false, embeddedContext: true },
      mcpCapabilities: { http: false, sse: false },
      sessionCapabilities: { list: {} },
    })
    expect(answer._meta).toEqual({ goal: { version: 1, controlMethod: '_goalkeeper/goal', actions: ['get', 'set', 'edit', 'pause', 'resume', 'clear'] } })
  })

  it('offers no goal extension when the composition has no goals', async () => {
    const { client } = await setup({ goals: false })
    const answer = await client.initialize()
    expect(answer._meta).toBeUndefined()
  })
})

describe('session/new and session/prompt', () => {
  it('streams reasoning and text, answers end_turn, and advertises /goal', async () => {
    const { h, client } = await setup()
    const { sessionId } = await client.agent.request('session/new', { cwd: h.workspace, mcpServers: [] })
    await client.until((update) => update.sessionUpdate === 'available_commands_update')
    expect(client.of(sessionId, 'available_commands_update')[0].availableCommands.map((command) => command.name)).toEqual(['goal'])
    h.scripted.push({ reasoning: 'The user says hello.', text: 'Hello, I am goalkeeper.' })
    const answer = await client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hi' }] })
    expect(answer).toEqual({ stopReason: 'end_turn' })
    expect(textOf(client.of(sessionId, 'agent_thought_chunk'))).toBe('The user says hello.')
    const chunks = client.of(sessionId, 'agent_message_chunk')
    // Short text is held back until the message is complete (see the streaming test for long text).
    expect(textOf(chunks)).toBe('Hello, I am goalkeeper.')
    // The prompt is not echoed back: the client shows it already.
    expect(client.of(sessionId, 'user_message_chunk')).toEqual([])
    // The session log is the record of it all, with the workspace as its cwd.
    const records = h.records(sessionId)
    expect(records[0].data).toMatchObject({ cwd: h.workspace })
    expect(records.filter((record) => record.type === 'user/message').map((record) => (record.data as any).content)).toEqual([[{ type: 'text', text: 'hi' }]])
    expect(h.scripted.requests[0].messages.at(-1)).toEqual({ role: 'user', content: [{ type: 'text', text: 'hi' }] })
  })

  it('streams long reasoning as the model gives it, then completes it from the record', async () => {
    const { h, client } = await setup()
    const { sessionId } = await client.agent.request('session/new', { cwd: h.workspace, mcpServers: [] })
    const reasoning = 'First I look at the files, then I decide what to change. '.repeat(8)
    h.scripted.push({ reasoning, text: 'Done.' })
    await client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'think' }] })
    const thoughts = client.of(sessionId, 'agent_thought_chunk')
    // All but the held-back end while it streams, the end with the assistant message: two chunks, nothing twice.
    expect(thoughts).toHaveLength(2)
    expect(textOf(thoughts)).toBe(reasoning)
  })

  it('says when the history was compacted, as a thought: here after the model refused the request as too long', async () => {
    const { h, client } = await setup()
    const { sessionId } = await client.agent.request('session/new', { cwd: h.workspace, mcpServers: [] })
    h.scripted.push(
      { text: `A long answer: ${'detail '.repeat(400)}` },
      { kind: 'error', code: 'CONTEXT_OVERFLOW', message: 'prompt is too long' },
      { text: 'What was done: a long answer about details.' },
      { text: 'Short now.' },
    )
    await client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'first' }] })
    expect(client.of(sessionId, 'agent_thought_chunk')).toEqual([])
    const answer = await client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'second' }] })
    expect(answer).toEqual({ stopReason: 'end_turn' })
    const thoughts = client.of(sessionId, 'agent_thought_chunk')
    expect(thoughts).toHaveLength(1)
    expect(textOf(thoughts)).toMatch(/^compacted: 2 messages, ~\d+(\.\d)?k? -> \d+(\.\d)?k? tokens of \d+(\.\d)?k? \(summary\) after the model refused the request as too long$/)
    expect(textOf(client.of(sessionId, 'agent_message_chunk'))).toContain('Short now.')
  })

  it('shows tool calls with kind, location, status and output, failed ones too', async () => {
    const { h, client } = await setup()
    await writeFile(path.join(h.workspace, 'a.txt'), 'alpha\n')
    const { sessionId } = await client.agent.request('session/new', { cwd: h.workspace, mcpServers: [] })
    h.scripted.push(tools(call('read_file', { path: 'a.txt' }), call('read_file', { path: 'missing.txt' })), { text: 'Read it.' })
    await client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'read a.txt' }] })
    const starts = client.of(sessionId, 'tool_call')
    expect(starts.map(({ title, kind, status, locations }) => ({ title, kind, status, locations }))).toEqual([
      { title: 'Read a.txt', kind: 'read', status: 'pending', locations: [{ path: path.join(h.workspace, 'a.txt') }] },
      { title: 'Read missing.txt', kind: 'read', status: 'pending', locations: [{ path: path.join(h.workspace, 'missing.txt') }] },
    ])
    expect(starts[0].rawInput).toEqual({ path: 'a.txt' })
    const [first, second] = starts.map((start) => client.of(sessionId, 'tool_call_update').filter((update) => update.toolCallId === start.toolCallId))
    expect(first.map((update) => update.status)).toEqual(['in_progress', 'completed'])
    expect(first[1].content).toEqual([{ type: 'content', content: { type: 'text', text: '     1\talpha' } }])
    expect(second.map((update) => update.status)).toEqual(['in_progress', 'failed'])
    expect((second[1].content![0] as any).content.text).toMatch(/missing\.txt/)
    expect(second[1].rawOutput).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } })
  })

  it('shows an edit as a diff', async () => {
    const { h, client } = await setup()
    await writeFile(path.join(h.workspace, 'a.txt'), 'alpha\nbeta\n')
    const { sessionId } = await client.agent.request('session/new', { cwd: h.workspace, mcpServers: [] })
    h.scripted.push(tools(call('edit_file', { path: 'a.txt', old_string: 'beta', new_string: 'gamma' })), { text: 'Edited.' })
    await client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'edit' }] })
    const done = client.of(sessionId, 'tool_call_update').find((update) => update.status === 'completed')!
    expect(done.content?.[0]).toEqual({ type: 'diff', path: path.join(h.workspace, 'a.txt'), oldText: 'beta', newText: 'gamma' })
    expect(client.of(sessionId, 'tool_call')[0].kind).toBe('edit')
  })

  it("shows a plugin's tool by what it says of itself (kind, title, locations, diff), and one that says nothing as other", async () => {
    const { h, client } = await setup()
    h.root.tools.register({
      name: 'lookup', kind: 'search', description: 'looks things up', parameters: { type: 'object', properties: { term: { type: 'string' } } },
      title: (args: { term: string }) => `Look up ${args.term}`,
      locations: (args: { term: string }) => [{ path: `docs/${args.term}.md`, line: 3 }, { path: '' }],
      diff: () => ({ path: 'docs/log.md', oldText: null, newText: 'looked up' }),
      execute: () => 'found',
    })
    h.root.tools.register({ name: 'plain', description: 'says nothing of itself', parameters: { type: 'object' }, execute: () => 'ok' })
    // A describer that throws is the tool's problem, not the client's: the call is shown by its name.
    h.root.tools.register({ name: 'broken', kind: 'edit', description: 'throws', parameters: { type: 'object' }, title: () => { throw new Error('no') }, execute: () => 'ok' })
    const { sessionId } = await client.agent.request('session/new', { cwd: h.workspace, mcpServers: [] })
    h.scripted.push(tools(call('lookup', { term: 'cordis' }), call('plain', { a: 1 }), call('broken', {})), { text: 'Done.' })
    await client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'look it up' }] })
    const starts = client.of(sessionId, 'tool_call')
    expect(starts.map(({ title, kind, locations }) => ({ title, kind, locations }))).toEqual([
      { title: 'Look up cordis', kind: 'search', locations: [{ path: path.join(h.workspace, 'docs/cordis.md'), line: 3 }] },
      { title: 'plain {"a":1}', kind: 'other', locations: [] },
      { title: 'broken {}', kind: 'edit', locations: [] },
    ])
    const done = client.of(sessionId, 'tool_call_update').find((update) => update.toolCallId === starts[0].toolCallId && update.status === 'completed')!
    expect(done.content?.[0]).toEqual({ type: 'diff', path: path.join(h.workspace, 'docs/log.md'), oldText: null, newText: 'looked up' })
  })

  it('takes embedded context and file links from the editor as text for the model', async () => {
    const { h, client } = await setup()
    const { sessionId } = await client.agent.request('session/new', { cwd: h.workspace, mcpServers: [] })
    h.scripted.push({ text: 'ok' })
    const file = `file://${path.join(h.workspace, 'src/x.ts')}`
    await client.agent.request('session/prompt', {
      sessionId,
      prompt: [
        { type: 'text', text: 'look at' },
        { type: 'resource_link', uri: file, name: 'x.ts' },
        { type: 'resource', resource: { uri: file, text: 'const x = 1 // unsaved' } },
      ],
    })
    expect(h.scripted.requests[0].messages.at(-1)).toEqual({ role: 'user', content: [
      { type: 'text', text: 'look at' },
      { type: 'text', text: '[x.ts](src/x.ts)' },
      { type: 'text', text: '<context source="src/x.ts">\nconst x = 1 // unsaved\n</context>' },
    ] })
  })

  it('maps how a turn ended to the stop reason, and a failed turn to an error naming it', async () => {
    const { h, client } = await setup({ agentLoop: { maxSteps: 1 } })
    const { sessionId } = await client.agent.request('session/new', { cwd: h.workspace, mcpServers: [] })
    const ask = () => client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'go' }] })
    h.scripted.push({ kind: 'max-tokens', text: 'cut' })
    expect(await ask()).toEqual({ stopReason: 'max_tokens' })
    h.scripted.push(tools(call('list_dir')))
    expect(await ask()).toEqual({ stopReason: 'max_turn_requests' })
    h.scripted.push({ kind: 'error', code: 'RATE_LIMIT', message: 'slow down' })
    await expect(ask()).rejects.toMatchObject({ code: -32603, message: 'the turn failed: RATE_LIMIT: slow down', data: { code: 'RATE_LIMIT' } })
    // The session goes on after a failed turn.
    h.scripted.push({ text: 'fine' })
    expect(await ask()).toEqual({ stopReason: 'end_turn' })
  })

  it('masks secrets of the environment in everything the client receives', async () => {
    const secret = 'sk-live-0123456789abcdef'
    const { h, client } = await setup({ server: { env: { SERVICE_API_KEY: secret } } })
    const { sessionId } = await client.agent.request('session/new', { cwd: h.workspace, mcpServers: [] })
    h.scripted.push(tools(call('run_command', { command: `echo ${secret}` })), { text: `The key is ${secret}.` })
    await client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'show the key' }] })
    const wire = JSON.stringify(client.updates)
    expect(wire).not.toContain(secret)
    expect(textOf(client.of(sessionId, 'agent_message_chunk'))).toBe('The key is [redacted SERVICE_API_KEY].')
    expect(client.of(sessionId, 'tool_call')[0].title).toBe('Run echo [redacted SERVICE_API_KEY]')
  })
})
