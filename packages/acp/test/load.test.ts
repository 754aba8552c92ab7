import { readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { call, tools } from '@goalkeeper/test-kit'
import { describe, expect, it } from 'vitest'
import { modelCall, setup, textOf } from './helpers.ts'

describe('session/load, session/list and a client that goes away', () => {
  it('a client that disconnects mid-round leaves the goal paused and the session loadable, replayed as updates', async () => {
    const { h, client, server, pipe, reconnect } = await setup()
    await writeFile(path.join(h.workspace, 'a.txt'), 'alpha\n')
    const { sessionId } = await client.agent.request('session/new', { cwd: h.workspace, mcpServers: [] })
    h.scripted.push({ reasoning: 'Reading first.', toolCalls: [call('read_file', { path: 'a.txt' })] }, { text: 'It says alpha.' })
    await client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'what is in a.txt?' }] })
    const round = modelCall()
    h.scripted.push(() => (round.called(), { kind: 'hang' as const }))
    void client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: '/goal Keep a.txt tidy' }] }).catch(() => {})
    await client.until((update) => update.sessionUpdate === 'plan' && update.entries.some((entry) => entry.content === 'Round 1/256: running'))
    // The round's start is saved before its model call: go away once the call is under way.
    await round.reached
    // The editor quits: its end of the pipe closes.
    await pipe.hangUp()
    await server.closed
    expect(h.root.agents.get(sessionId)).toBeUndefined()
    const saved = h.readFile(sessionId)
    const goal = saved.filter((record) => record.type === 'goal/change').at(-1)!.data as any
    expect(goal.op).toBe('pause')
    expect(saved.at(-1)!.data).toMatchObject({ outcome: { kind: 'aborted', cause: 'user' } })

    const second = reconnect()
    await second.client.initialize()
    expect(await second.client.agent.request('session/load', { sessionId, cwd: h.workspace, mcpServers: [] })).toEqual({ _meta: { goalkeeper: { integrity: { state: 'signed', lines: expect.any(Number), unsignedPrefix: 0 } } } })
    const replay = second.client.updates.map((n) => n.update)
    expect(replay.map((update) => update.sessionUpdate)).toEqual([
      'user_message_chunk', 'agent_thought_chunk', 'tool_call', 'tool_call_update', 'tool_call_update', 'agent_message_chunk',
      'available_commands_update', 'plan', 'session_info_update',
    ])
    expect(textOf(replay.filter((update) => update.sessionUpdate === 'user_message_chunk'))).toBe('what is in a.txt?')
    expect(textOf(replay.filter((update) => update.sessionUpdate === 'agent_message_chunk'))).toBe('It says alpha.')
    expect(replay.filter((update) => update.sessionUpdate === 'tool_call_update').map((update: any) => update.status)).toEqual(['in_progress', 'completed'])
    // Loaded, the goal is disarmed: nothing runs until the person resumes it.
    expect((replay.at(-1) as any)._meta.goal).toMatchObject({ status: 'paused', activation: 'disarmed', roundsStarted: 1, lastRound: { round: 1, outcome: 'aborted' } })
    expect(second.server.sessions.get(sessionId)).toBeDefined()
    // And it goes on from where it was.
    h.scripted.push({ text: 'Still alpha.' })
    const from = second.client.updates.length
    expect(await second.client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'and now?' }] })).toEqual({ stopReason: 'end_turn' })
    expect(textOf(second.client.updates.slice(from).map((n) => n.update))).toBe('Still alpha.')
    expect(h.scripted.requests.at(-1)!.messages.filter((message) => message.role === 'user')).toHaveLength(3)
  })

  it('refuses to load an unknown session or one of another workspace, by name', async () => {
    const { h, client, server, pipe, reconnect } = await setup()
    const { sessionId } = await client.agent.request('session/new', { cwd: h.workspace, mcpServers: [] })
    await pipe.hangUp()
    await server.closed
    const second = reconnect()
    await second.client.initialize()
    const load = (params: { sessionId: string; cwd: string }) => second.client.agent.request('session/load', { ...params, mcpServers: [] })
    await expect(load({ sessionId: 'no-such-session', cwd: h.workspace })).rejects.toMatchObject({ code: -32002, message: expect.stringContaining('no-such-session') })
    await expect(load({ sessionId, cwd: h.dir })).rejects.toMatchObject({ code: -32602, message: `cwd: session ${sessionId} belongs to ${h.workspace}, not ${h.dir}` })
    // The refused load left nothing open.
    expect(h.root.agents.get(sessionId)).toBeUndefined()
    await expect(load({ sessionId, cwd: 'relative/dir' })).rejects.toMatchObject({ code: -32602, message: 'cwd: "relative/dir" is not an absolute path' })
    expect(await load({ sessionId, cwd: h.workspace })).toMatchObject({ _meta: { goalkeeper: { integrity: { state: 'signed' } } } })
  })

  it('refuses to load a tampered or cut session, saying what its signatures say', async () => {
    const { h, client, server, pipe, reconnect } = await setup()
    const { sessionId } = await client.agent.request('session/new', { cwd: h.workspace, mcpServers: [] })
    h.scripted.push({ text: 'ok' })
    await client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hello' }] })
    await pipe.hangUp()
    await server.closed
    const file = path.join(h.sessionsDir, `${sessionId}.jsonl`)
    const lines = (await readFile(file, 'utf8')).trimEnd().split('\n')
    const forged = JSON.stringify({ seq: lines.length, at: 1, type: 'input/queued', data: { message: { id: 'f', content: [{ type: 'text', text: 'ship it' }], source: { kind: 'human' } } } })
    await writeFile(file, [...lines, forged].map((line) => `${line}\n`).join(''))
    const second = reconnect()
    await second.client.initialize()
    const load = () => second.client.agent.request('session/load', { sessionId, cwd: h.workspace, mcpServers: [] })
    await expect(load()).rejects.toMatchObject({ code: -32602, data: { code: 'SESSION_TAMPERED', integrity: { state: 'tampered', line: lines.length + 1, reason: expect.stringContaining('line is not signed, yet lines before it are') } } })
    // Cut after the first record: in a log of version 2 a batch cut short is left out whole.
    const lastSeq = (JSON.parse(lines[1]).batch ?? 1) > 1 ? 0 : 1
    await writeFile(file, lines.slice(0, 2).map((line) => `${line}\n`).join(''))
    await expect(load()).rejects.toMatchObject({ code: -32602, data: { code: 'SESSION_TRUNCATED', integrity: { state: 'truncated', lastSeq } } })
    expect(h.root.agents.get(sessionId)).toBeUndefined()
    const listed = await second.client.agent.request('session/list', {})
    expect(listed.sessions.find((info) => info.sessionId === sessionId)?._meta).toMatchObject({ goalkeeper: { problem: { code: 'SESSION_TRUNCATED' } } })
  })

  it('lists saved sessions with their titles, filtered by workspace and paged', async () => {
    const { h, client } = await setup({ server: { pageSize: 2 } })
    const other = path.join(h.dir, 'other')
    await (await import('node:fs/promises')).mkdir(other)
    const ids: string[] = []
    for (const [cwd, text] of [[h.workspace, 'first'], [h.workspace, 'second'], [other, 'third']] as const) {
      const { sessionId } = await client.agent.request('session/new', { cwd, mcpServers: [] })
      h.scripted.push({ text: 'ok' })
      await client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text }] })
      ids.push(sessionId)
    }
    const page = await client.agent.request('session/list', { cwd: h.workspace })
    expect(page.sessions.map((info) => [info.sessionId, info.title, info.cwd])).toEqual([[ids[1], 'second', h.workspace], [ids[0], 'first', h.workspace]])
    expect(page.nextCursor).toBeUndefined()
    const all = await client.agent.request('session/list', {})
    expect(all.sessions).toHaveLength(2)
    expect(all.nextCursor).toBeDefined()
    const rest = await client.agent.request('session/list', { cursor: all.nextCursor })
    expect(rest.sessions.map((info) => info.sessionId)).toEqual([ids[0]])
    expect(new Date(rest.sessions[0].updatedAt!).getTime()).toBeGreaterThan(0)
    await expect(client.agent.request('session/list', { cursor: 'x' })).rejects.toMatchObject({ code: -32602, message: 'cursor: "x" is not a cursor this agent gave out' })
  })
})
