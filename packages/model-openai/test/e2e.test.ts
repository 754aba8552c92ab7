import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import type { Agent } from '@goalkeeper/agent-loop'
import { createHarness, type Harness } from '@goalkeeper/test-kit'
import * as openaiPlugin from '../src/index.ts'
import { delta, frame, sse, textReply, usageFrame, useServers, type Handler, type Received } from './fake-server.ts'

const KEY = 'sk-e2e-5d4c3b2a19f8e7d6c5b4SECRET'
const serve = useServers()
const savedEnv = { ...process.env }
let harness: Harness | undefined
afterEach(async () => {
  await harness?.dispose()
  harness = undefined
  process.env = { ...savedEnv }
})

const toolCall = (id: string, name: string, args: Record<string, unknown>): Handler => {
  const json = JSON.stringify(args)
  const half = Math.floor(json.length / 2)
  return sse(
    delta({ role: 'assistant', content: null, reasoning_content: `I should call ${name}.` }),
    delta({ tool_calls: [{ index: 0, id, type: 'function', function: { name, arguments: json.slice(0, half) } }] }),
    delta({ tool_calls: [{ index: 0, function: { arguments: json.slice(half) } }] }),
    delta({}, 'tool_calls'),
    usageFrame({ prompt_tokens: 200, completion_tokens: 20, prompt_cache_hit_tokens: 128 }),
    frame('[DONE]'),
  )
}

const lastMessage = (received: Received) => received.body.messages[received.body.messages.length - 1]

/** A DeepSeek-like endpoint on 127.0.0.1, driven by the plugin's `deepseek` preset with the key from the environment. */
const start = async (handlers: Handler[], goalPlugins = false) => {
  const server = await serve(handlers)
  harness = await createHarness()
  if (goalPlugins) {
    await harness.load(await import('@goalkeeper/goal'), {})
    await harness.load(await import('@goalkeeper/tool-goal'), {})
    await harness.load(await import('@goalkeeper/goal-session'), {})
  }
  process.env.DEEPSEEK_API_KEY = KEY
  await harness.load(openaiPlugin, { preset: 'deepseek', baseUrl: server.url, baseDelayMs: 1 })
  const agent = await harness.createAgent({ model: 'deepseek' })
  return { server, agent }
}

const expectNoKey = async (agent: Agent) => {
  await harness!.root.sessions.flush(agent.session)
  const file = await fs.readFile(agent.session.file, 'utf8')
  expect(file.length).toBeGreaterThan(0)
  expect(file).not.toContain(KEY)
  expect(harness!.logs.map((line) => line.text).join('\n')).not.toContain(KEY)
}

describe('end to end through the harness', () => {
  it('runs one agent turn with a tool call round trip against the local server', async () => {
    const { server, agent } = await start([toolCall('call_r1', 'read_file', { path: 'notes.txt' }), textReply('The note says: remember the milk.')])
    await fs.writeFile(path.join(harness!.workspace, 'notes.txt'), 'remember the milk\n')

    agent.send({ content: 'What does notes.txt say?' })
    await agent.whenIdle()

    expect(server.received).toHaveLength(2)
    for (const { headers } of server.received) expect(headers.authorization).toBe(`Bearer ${KEY}`)
    const second = server.received[1].body
    expect(second.model).toBe('deepseek-chat')
    expect(second.messages.at(-2)).toEqual({
      role: 'assistant', content: null,
      tool_calls: [{ id: 'call_r1', type: 'function', function: { name: 'read_file', arguments: '{"path":"notes.txt"}' } }],
    })
    expect(second.messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_r1', content: expect.stringContaining('remember the milk') })
    expect(JSON.stringify(second)).not.toContain('I should call')

    const records = harness!.readFile(agent)
    const assistant = records.filter((record) => record.type === 'assistant/message').map((record) => record.data as any)
    expect(assistant[0]).toMatchObject({
      text: '', reasoning: 'I should call read_file.',
      toolCalls: [{ id: 'call_r1', name: 'read_file', arguments: '{"path":"notes.txt"}' }],
      usage: { inputTokens: 200, outputTokens: 20, cachedInputTokens: 128 },
    })
    expect(assistant[1]).toMatchObject({ text: 'The note says: remember the milk.' })
    expect(records.find((record) => record.type === 'tool/result')?.data).toMatchObject({ callId: 'call_r1', ok: true })
    expect(records.at(-1)).toMatchObject({ type: 'turn/end', data: { outcome: { kind: 'completed' } } })
    await expectNoKey(agent)
  })

  it('ends the turn with the mapped error code when the server refuses the key', async () => {
    const { server, agent } = await start([(res) => {
      res.writeHead(401, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ error: { message: `Incorrect API key provided: ${KEY}` } }))
    }])
    agent.send({ content: 'hello' })
    await agent.whenIdle()
    expect(server.received).toHaveLength(1)
    const end = harness!.readFile(agent).at(-1)
    expect(end).toMatchObject({ type: 'turn/end', data: { outcome: { kind: 'error', code: 'AUTH', message: 'deepseek: HTTP 401: Incorrect API key provided: ***' } } })
    await expectNoKey(agent)
  })

  it('sends broken tool calls on to the pipeline, which answers the model with INVALID_JSON and UNKNOWN_TOOL', async () => {
    const broken = sse(
      delta({ tool_calls: [{ index: 0, id: 'call_bad', type: 'function', function: { name: 'read_file', arguments: '{"path": "notes.txt"' } }] }),
      delta({ tool_calls: [{ index: 1, function: { arguments: '{}' } }] }),
      delta({}, 'tool_calls'),
      frame('[DONE]'),
    )
    const { server, agent } = await start([broken, textReply('I will fix the call.')])
    agent.send({ content: 'Read notes.txt' })
    await agent.whenIdle()

    const results = harness!.readFile(agent).filter((record) => record.type === 'tool/result').map((record) => record.data as any)
    expect(results).toHaveLength(2)
    expect(results[0]).toMatchObject({ callId: 'call_bad', ok: false, error: { code: 'INVALID_JSON' } })
    expect(results[1]).toMatchObject({ ok: false, error: { code: 'UNKNOWN_TOOL', message: expect.stringContaining('The tool call has no name.') } })
    const tools = server.received[1].body.messages.filter((message: any) => message.role === 'tool')
    expect(tools[0]).toMatchObject({ tool_call_id: 'call_bad', content: expect.stringContaining('are not valid JSON') })
    expect(tools[1].tool_call_id).toMatch(/^call_[0-9a-f]{24}$/)
    expect(harness!.readFile(agent).at(-1)).toMatchObject({ type: 'turn/end', data: { outcome: { kind: 'completed' } } })
    await expectNoKey(agent)
  })

  it('runs one goal round to completion through the goal plugins', async () => {
    let agent!: Agent
    // The reply depends on what the loop sent, as a real model's would.
    const model: Handler = (res, received) => {
      const last = lastMessage(received)
      if (last.role === 'user' && last.content.includes('<goal_round>')) {
        return toolCall('call_w1', 'write_file', { path: 'DONE.md', content: 'done\n' })(res, received)
      }
      if (last.role === 'tool' && last.tool_call_id === 'call_w1') {
        const goal = harness!.root.goals.get(agent)!
        return toolCall('call_g1', 'update_goal', { goal_id: goal.id, revision: goal.revision, action: 'complete' })(res, received)
      }
      return textReply('DONE.md exists with the expected content; goal complete.')(res, received)
    }
    const started = await start([model], true)
    agent = started.agent

    const completed = new Promise<void>((resolve) => harness!.root.on('goal/changed', (_agent, change) => {
      if (change.goal?.phase === 'complete') resolve()
    }))
    harness!.root.goals.create(agent, { objective: 'Create DONE.md containing "done"', maxGoalRounds: 3 })
    await completed
    await agent.whenIdle()

    expect(await fs.readFile(path.join(harness!.workspace, 'DONE.md'), 'utf8')).toBe('done\n')
    expect(harness!.root.goals.get(agent)).toMatchObject({ phase: 'complete', roundsStarted: 1 })
    const records = harness!.readFile(agent)
    const goalMessages = records.filter((record) => record.type === 'user/message' && (record.data as any).source.kind === 'goal')
    expect(goalMessages).toHaveLength(1)
    expect(started.server.received.length).toBeGreaterThanOrEqual(3)
    expect(lastMessage(started.server.received.at(-1)!).content).toContain('The goal is now complete.')
    expect(records.at(-1)).toMatchObject({ type: 'turn/end', data: { outcome: { kind: 'completed' } } })
    await expectNoKey(agent)
  })
})
