// The modes and rules on the real tool pipeline and agent loop (workspace tools loaded, model scripted):
// what runs, what is denied with which reason, who is asked, and what the session records.
import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createHarness, type Harness } from '@goalkeeper/test-kit'
import * as permissions from '../src/index.ts'
import type { PermissionAnswer, PermissionRequest } from '../src/index.ts'
import { commands, runCalls } from './run.ts'

let h: Harness | undefined
afterEach(async () => {
  await h?.dispose()
  h = undefined
})

async function start(config: Record<string, unknown> = {}) {
  h = await createHarness()
  await h.load(permissions, config)
  return { h, agent: await h.createAgent() }
}

describe('read-only', () => {
  it('reads; writes and commands are denied with a reason when nobody can be asked', async () => {
    const { h, agent } = await start({ mode: 'read-only' })
    await fs.writeFile(path.join(h.workspace, 'a.txt'), 'hello\n')
    const [read, write, edit, command, list] = await runCalls(h, agent, [
      ['read_file', { path: 'a.txt' }],
      ['write_file', { path: 'b.txt', content: 'x' }],
      ['edit_file', { path: 'a.txt', old_string: 'hello', new_string: 'bye' }],
      ['run_command', { command: 'touch c.txt' }],
      ['list_dir', {}],
    ])
    expect(read).toMatchObject({ ok: true })
    expect(list).toMatchObject({ ok: true })
    expect(write).toMatchObject({ ok: false, error: { code: 'DENIED' }, denied: { by: 'permissions' } })
    expect(write.denied.reason).toBe('write_file changes files, which the read-only permission mode does not allow without asking, and nobody is there to allow it (an unattended run denies such calls)')
    expect(edit).toMatchObject({ denied: { by: 'permissions' } })
    expect(command.denied.reason).toMatch(/^run_command runs a command, which the read-only permission mode/)
    // The model read the reason, and nothing changed.
    expect(h.scripted.requests[2].messages.at(-1)).toMatchObject({ role: 'tool', content: `The call was denied by permissions: ${write.denied.reason}` })
    expect(await fs.readdir(h.workspace)).toEqual(['a.txt'])
    expect(await fs.readFile(path.join(h.workspace, 'a.txt'), 'utf8')).toBe('hello\n')
  })

  it('asks the listener that answers for the agent; "session" is remembered per tool, and per exact command', async () => {
    const { h, agent } = await start({ mode: 'read-only' })
    const asked: PermissionRequest[] = []
    const answers: PermissionAnswer[] = [
      { kind: 'allow', scope: 'session', by: 'test' },
      { kind: 'allow', scope: 'once', by: 'test' },
      { kind: 'deny', by: 'test' },
    ]
    h.root.on('permissions/ask', (request) => {
      asked.push(request)
      return Promise.resolve(answers.shift()!)
    })
    const results = await runCalls(h, agent, [
      ['write_file', { path: 'a.txt', content: '1' }],
      ['write_file', { path: 'b.txt', content: '2' }],
      ['run_command', { command: 'echo one' }],
      ['run_command', { command: 'echo two' }],
    ])
    expect(asked.map((request) => [request.tool, request.command])).toEqual([['write_file', undefined], ['run_command', 'echo one'], ['run_command', 'echo two']])
    expect(asked[0].why).toBe('write_file changes files, which the read-only permission mode does not allow without asking')
    expect(results.map((result) => result.ok)).toEqual([true, true, true, false])
    expect(results[3]).toMatchObject({ denied: { by: 'permissions', reason: expect.stringMatching(/and the person \(test\) said no$/) } })
    // An approved command runs in the sandbox, as in workspace-write.
    expect(results[2].content).toContain('in the sandbox')
    const records = h.records(agent).filter((record) => record.type === 'permission/asked').map((record) => record.data)
    expect(records).toEqual([
      expect.objectContaining({ tool: 'write_file', answer: 'session', by: 'test', callId: 'call_1' }),
      expect.objectContaining({ tool: 'run_command', answer: 'once', by: 'test' }),
      expect.objectContaining({ tool: 'run_command', answer: 'deny', by: 'test' }),
    ])
  })
})

describe('permissions/waiting', () => {
  it('announces a question a listener took, before the answer; none when nobody is there to ask', async () => {
    const { h, agent } = await start({ mode: 'read-only' })
    const timeline: string[] = []
    h.root.on('permissions/waiting', (request) => void timeline.push(`waiting ${request.tool}`))
    let present = true
    h.root.on('permissions/ask', () => {
      if (!present) return undefined
      timeline.push('asked')
      // Answered a macrotask later: a person takes time.
      return new Promise<PermissionAnswer>((resolve) => setImmediate(() => (timeline.push('answered'), resolve({ kind: 'deny', by: 'test' }))))
    })
    await runCalls(h, agent, [['write_file', { path: 'a.txt', content: '1' }]])
    expect(timeline).toEqual(['asked', 'waiting write_file', 'answered'])
    present = false
    await runCalls(h, agent, [['write_file', { path: 'b.txt', content: '2' }]])
    expect(timeline).toEqual(['asked', 'waiting write_file', 'answered'])
  })
})

describe('rules', () => {
  it('deny wins over allow; a deny pattern looks into compound commands; an allow pattern vouches only for a simple one', async () => {
    const { h, agent } = await start({
      mode: 'read-only',
      rules: [
        { command: 'echo *', action: 'allow' },
        { command: 'git push*', action: 'deny', reason: 'pushing is for people' },
        { tool: 'write_*', action: 'allow' },
        { tool: 'write_file', action: 'deny' },
      ],
    })
    const [simple, compound, push, write] = await runCalls(h, agent, [
      ...commands('echo allowed', 'echo a; touch sneaky.txt', 'echo x && git push origin main'),
      ['write_file', { path: 'w.txt', content: 'x' }],
    ])
    expect(simple).toMatchObject({ ok: true, content: expect.stringContaining('allowed') })
    expect(compound.denied.reason).toMatch(/read-only permission mode/)
    expect(push).toMatchObject({ denied: { by: 'permissions', reason: 'pushing is for people' } })
    expect(write.denied.reason).toBe('the permission rule for tool write_file denies it')
    await expect(fs.stat(path.join(h.workspace, 'sneaky.txt'))).rejects.toThrow(/ENOENT/)
  })

  it('tools the modes do not know ask, unless classed or allowed; full lets them run', async () => {
    const { h, agent } = await start()
    h.root.tools.register({ name: 'weather', description: 'the weather', parameters: { type: 'object' }, execute: () => 'sunny' })
    const [unknown] = await runCalls(h, agent, [['weather', {}]])
    expect(unknown.denied.reason).toBe('weather is not one of the workspace tools, so what it does is not known, which the workspace-write permission mode does not allow without asking, and nobody is there to allow it (an unattended run denies such calls)')
    await h.dispose()

    for (const config of [{ classes: { weather: 'read' } }, { rules: [{ tool: 'weath*', action: 'allow' }] }, { mode: 'full' }]) {
      const next = await start(config)
      next.h.root.tools.register({ name: 'weather', description: 'the weather', parameters: { type: 'object' }, execute: () => 'sunny' })
      const [result] = await runCalls(next.h, next.agent, [['weather', {}]])
      expect(result, JSON.stringify(config)).toMatchObject({ ok: true, content: 'sunny' })
      await next.h.dispose()
    }
  })

  it('a tool is judged by the kind it declares; the configured classes override it by name', async () => {
    const register = (harness: Harness, kind: 'read' | 'search' | 'edit' | 'execute' | 'session' | 'other') => harness.root.tools.register({
      name: 'weather', kind, description: 'the weather', parameters: { type: 'object' }, execute: () => 'sunny',
    })
    const cases = [
      { mode: 'read-only', kind: 'read', runs: true },
      { mode: 'read-only', kind: 'search', runs: true },
      { mode: 'read-only', kind: 'session', runs: true },
      { mode: 'read-only', kind: 'edit', runs: false, why: 'weather changes files, which the read-only permission mode' },
      { mode: 'read-only', kind: 'execute', runs: false, why: 'weather runs a command, which the read-only permission mode' },
      { mode: 'workspace-write', kind: 'edit', runs: true },
      { mode: 'workspace-write', kind: 'other', runs: false, why: 'weather is not one of the workspace tools' },
      // The user's word wins over the tool's, both ways.
      { mode: 'workspace-write', kind: 'read', classes: { weather: 'other' }, runs: false, why: 'weather is not one of the workspace tools' },
      { mode: 'read-only', kind: 'execute', classes: { weather: 'read' }, runs: true },
    ] as const
    for (const { mode, kind, runs, ...rest } of cases) {
      const classes = 'classes' in rest ? rest.classes : {}
      const next = await start({ mode, classes })
      register(next.h, kind)
      const [result] = await runCalls(next.h, next.agent, [['weather', {}]])
      const label = JSON.stringify({ mode, kind, classes })
      if (runs) expect(result, label).toMatchObject({ ok: true, content: 'sunny' })
      else expect(result.denied?.reason, label).toMatch(new RegExp(`^${'why' in rest ? rest.why : ''}`))
      await next.h.dispose()
    }
    h = undefined
  })

  it('a rule without a tool or a command fails the load, naming it', async () => {
    h = await createHarness()
    await expect(h.load(permissions, { rules: [{ action: 'deny' }] })).rejects.toThrow('rules[0]: give a tool, a command, or both')
    await expect(h.load(permissions, { rules: [{ tool: 'read_file', command: 'x', action: 'deny' }] })).rejects.toThrow(/rules\[0\]: a command pattern applies to run_command only/)
    await expect(h.load(permissions, { mode: 'yolo' })).rejects.toThrow()
  })
})

describe('the seam', () => {
  it('a call another listener denied is not asked about', async () => {
    const { h, agent } = await start({ mode: 'read-only' })
    let asked = 0
    h.root.on('permissions/ask', () => (asked++, Promise.resolve({ kind: 'allow', scope: 'once', by: 'test' })))
    h.root.on('tool/before-call', async () => ({ kind: 'deny', by: 'other', reason: 'no' }))
    const [result] = await runCalls(h, agent, [['write_file', { path: 'a.txt', content: 'x' }]])
    expect(result).toMatchObject({ denied: { by: 'other' } })
    expect(asked).toBe(0)
  })

  it('a turn cancelled while a person is asked ends the call at once', async () => {
    const { h, agent } = await start({ mode: 'read-only' })
    let signal: AbortSignal | undefined
    h.root.on('permissions/ask', (request) => {
      signal = request.signal
      queueMicrotask(() => agent.cancel('user'))
      return new Promise(() => {})
    })
    h.scripted.push({ toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'x' } }] })
    agent.send({ content: 'go' })
    await agent.whenIdle()
    const result = h.records(agent).find((record) => record.type === 'tool/result')?.data as Record<string, any>
    expect(result).toMatchObject({ ok: false, error: { code: 'ABORTED' } })
    expect(signal?.aborted).toBe(true)
  })
})
