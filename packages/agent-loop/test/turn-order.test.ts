import { describe, expect } from 'vitest'
import { describeRecords, it, timeline } from './helpers.ts'

const TRACKED = [
  'session/event', 'session/flush', 'agent/queued', 'agent/status', 'agent/prompt-submit', 'agent/turn-start',
  'agent/tool-start', 'agent/tool-end', 'agent/step-end', 'agent/turn-end', 'agent/error',
] as const

describe('turn order', () => {

  it('records, events, status and flush of a turn with two tool calls follow DESIGN.md section 6', async ({ h }) => {
    const agent = await h.createAgent()
    h.scripted.push(
      { text: 'Looking.', toolCalls: [{ name: 'echo', arguments: { text: 'a' } }, { name: 'echo', arguments: { text: 'b' } }] },
      { text: 'Done.' },
    )
    const events = h.events(TRACKED)
    agent.send({ content: 'hello' })
    await agent.whenIdle()

    expect(timeline(events)).toEqual([
      'input/queued hello',
      'agent/queued',
      'agent/status running',
      'agent/prompt-submit',
      'turn/start 1',
      'user/message hello',
      'agent/turn-start',
      'step/start 1.1',
      'assistant/message',
      'tool/call echo',
      'agent/tool-start echo',
      'tool/result ok',
      'agent/tool-end echo',
      'tool/call echo',
      'agent/tool-start echo',
      'tool/result ok',
      'agent/tool-end echo',
      'step/end 1.1',
      'agent/step-end 1.1',
      'step/start 1.2',
      'assistant/message',
      'step/end 1.2',
      'agent/step-end 1.2',
      'turn/end 1 completed',
      'agent/turn-end completed',
      'session/flush',
      'agent/status idle',
    ])
    // The flush ran before idle, so the file already holds every record.
    expect(h.readFile(agent)).toEqual(h.records(agent))
    const queued = h.records(agent).find((r) => r.type === 'input/queued')!.data as any
    const admitted = h.records(agent).find((r) => r.type === 'user/message')!.data as any
    expect(admitted.id).toBe(queued.message.id)
  })

  it('derives each model request from the session log', async ({ h }) => {
    const agent = await h.createAgent({ system: 'Agent-specific rules.' })
    h.root.on('agent/system-prompt', (_agent, parts) => { parts.push('Section from a plugin.') })
    h.scripted.push({ toolCalls: [{ id: 'c1', name: 'echo', arguments: { text: 'pong' } }] }, { text: 'Finished.' })
    agent.send({ content: 'ping' })
    await agent.whenIdle()

    const [first, second] = h.scripted.requests
    expect(first.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'ping' }] }])
    expect(second.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'ping' }] },
      { role: 'assistant', text: '', toolCalls: [{ id: 'c1', name: 'echo', arguments: '{"text":"pong"}' }] },
      { role: 'tool', callId: 'c1', name: 'echo', ok: true, content: 'pong' },
    ])
    expect(first.system).toContain('tool calls are the truth')
    expect(first.system).toContain(`Workspace root: ${h.workspace}`)
    expect(first.system).toContain('Agent-specific rules.')
    expect(first.system).toContain('Section from a plugin.')
    expect(first.tools.map((tool) => tool.name).sort()).toEqual(['boom', 'context', 'echo', 'wait'])
  })

  it('passes the turn sources, cwd and ids to tools and numbers turns from the session', async ({ h }) => {
    const agent = await h.createAgent({ tools: ['context'] })
    h.scripted.push({ text: 'one' }, { toolCalls: [{ id: 'k1', name: 'context' }] }, { text: 'two' })
    agent.send({ content: 'first' })
    await agent.whenIdle()
    agent.send({ content: 'second', source: { kind: 'plugin', name: 'tester' } })
    await agent.whenIdle()

    const result = h.records(agent).find((r) => r.type === 'tool/result')!.data as any
    expect(JSON.parse(result.content)).toEqual({
      turn: 2, step: 1, callId: 'k1', cwd: h.workspace, turnSources: [{ kind: 'plugin', name: 'tester' }], agent: agent.id,
    })
    expect(h.scripted.requests[1].tools.map((tool) => tool.name)).toEqual(['context'])
    expect(describeRecords(h.records(agent)).filter((r) => r.startsWith('turn/'))).toEqual([
      'turn/start 1', 'turn/end 1 completed', 'turn/start 2', 'turn/end 2 completed',
    ])
  })
})
