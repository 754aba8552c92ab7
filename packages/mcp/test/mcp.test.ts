// The mcp plugin against the reference server (@modelcontextprotocol/server-everything) over stdio and over
// streamable HTTP on 127.0.0.1, with the real tools pipeline, agent loop and permission modes; only the
// model is scripted.
import { afterEach, describe, expect, it } from 'vitest'
import type { Agent } from '@goalkeeper/agent-loop'
import { call, createHarness, done, tools, type Harness } from '@goalkeeper/test-kit'
import * as mcp from '../src/index.ts'
import { alive, connected, startHttpServer, stdioConfig } from './everything.ts'

let h: Harness | undefined
afterEach(async () => {
  await h?.dispose()
  h = undefined
})

async function start(config: Record<string, unknown> = stdioConfig(), mode = 'full') {
  h = await createHarness()
  await h.load(await import('@goalkeeper/permissions'), { mode })
  const fiber = await h.load(mcp, config)
  return { h, fiber, agent: await h.createAgent() }
}

/** The results of one turn in which the model makes `calls`, one step each. */
async function turn(h: Harness, agent: Agent, ...calls: [string, Record<string, unknown>][]) {
  const before = h.records(agent).length
  h.scripted.push(...calls.map(([name, args]) => tools(call(name, args))), done())
  agent.send({ content: 'go' })
  await agent.whenIdle()
  return h.records(agent).slice(before).filter((record) => record.type === 'tool/result').map((record) => record.data as Record<string, any>)
}


describe('mcp over stdio', { timeout: 60_000 }, () => {
  it('lists the server\'s tools as everything__tool with their schemas, and calls them', async () => {
    const { h, agent } = await start()
    const names = h.root.tools.list().map((tool) => tool.name).filter((name) => name.startsWith('everything__'))
    expect(names).toEqual(expect.arrayContaining(['everything__echo', 'everything__get-sum', 'everything__trigger-long-running-operation']))
    expect(h.root.tools.get('everything__echo')!.parameters).toMatchObject({ type: 'object', properties: { message: { type: 'string' } }, required: ['message'] })
    expect(h.root.tools.get('everything__echo')!.description).toMatch(/\(MCP server everything\)$/)
    const [echo, sum] = await turn(h, agent, ['everything__echo', { message: 'hello' }], ['everything__get-sum', { a: 2, b: 3 }])
    expect(echo).toMatchObject({ ok: true, content: 'Echo: hello' })
    expect(sum).toMatchObject({ ok: true, content: expect.stringContaining('5') })
    // Arguments are checked against the server's schema before anything is sent.
    const [bad] = await turn(h, agent, ['everything__echo', { text: 'x' }])
    expect(bad).toMatchObject({ ok: false, error: { code: 'INVALID_ARGUMENTS' } })
  })

  it('an error result of the server is a failed call the model reads', async () => {
    const { h, agent } = await start()
    const [result] = await turn(h, agent, ['everything__gzip-file-as-resource', { name: 'x.gz', data: 'ftp://example.com/x' }])
    expect(result).toMatchObject({ ok: false, error: { code: 'MCP_TOOL_ERROR' } })
    expect(result.content).toMatch(/Unsupported URL protocol/)
  })

  it('a call the server does not answer in time fails at the deadline, and the server goes on serving', async () => {
    const { h, agent } = await start(stdioConfig({ timeoutMs: 400 }))
    const started = Date.now()
    const [slow, echo] = await turn(h, agent, ['everything__trigger-long-running-operation', { duration: 30, steps: 30 }], ['everything__echo', { message: 'still here' }])
    expect(slow).toMatchObject({ ok: false, error: { code: 'MCP_TIMEOUT', message: 'The MCP server "everything" did not answer trigger-long-running-operation within 400 ms; the call was cancelled.' } })
    expect(Date.now() - started).toBeLessThan(10_000)
    expect(echo).toMatchObject({ ok: true, content: 'Echo: still here' })
  })

  it('reconnects after the server crashes', async () => {
    const { h, agent } = await start(stdioConfig({ reconnectDelayMs: 50 }))
    const server = serverOf(h)
    const first = server.pid!
    expect(alive(first)).toBe(true)
    const back = connected(h.root)
    process.kill(first, 'SIGKILL')
    expect(await back).toContain('echo')
    expect(server.pid).not.toBe(first)
    const [echo] = await turn(h, agent, ['everything__echo', { message: 'again' }])
    expect(echo).toMatchObject({ ok: true, content: 'Echo: again' })
    expect(h.logs.some((line) => line.level === 'warn' && /\[everything\] connection lost/.test(line.text))).toBe(true)
  })

  it('the server\'s stderr goes to the log; its environment holds no host secret', async () => {
    process.env.GK_MCP_TEST_API_KEY = 'sk-mcp-test-0123456789'
    try {
      const { h, agent } = await start()
      expect(h.logs.some((line) => line.name === 'mcp' && line.text.includes('[everything] Starting default (STDIO) server'))).toBe(true)
      const [env] = await turn(h, agent, ['everything__get-env', {}])
      expect(env).toMatchObject({ ok: true })
      expect(env.content).not.toContain('GK_MCP_TEST_API_KEY')
    } finally {
      delete process.env.GK_MCP_TEST_API_KEY
    }
  })

  it('unloaded in the middle of a goal round\'s call: the call ends at once, the goal goes on, the tools go and the process ends', async () => {
    const { h, fiber, agent } = await start()
    await h.load(await import('@goalkeeper/goal'), {})
    await h.load(await import('@goalkeeper/tool-goal'), {})
    await h.load(await import('@goalkeeper/goal-session'), {})
    const pid = lastPid(h)!
    const running = new Promise<void>((resolve) => h.root.on('agent/tool-start', () => resolve()))
    const settled = new Promise<string>((resolve) => h.root.on('goal/changed', (_agent, change) => {
      if (change.goal && change.goal.phase !== 'active') resolve(change.goal.phase)
    }))
    // Round 1 calls the slow tool; then each round answers in text until the round cap blocks the goal.
    h.scripted.push(tools(call('everything__trigger-long-running-operation', { duration: 30, steps: 30 })), done('round 1 went on'), done('round 2'))
    h.root.goals.create(agent, { objective: 'Use the slow tool', maxGoalRounds: 2 })
    await running
    const started = Date.now()
    await fiber.dispose()
    expect(await settled).toBe('blocked')
    await agent.whenIdle()
    expect(Date.now() - started).toBeLessThan(10_000)
    const [result] = h.records(agent).filter((record) => record.type === 'tool/result').map((record) => record.data as Record<string, any>)
    expect(result).toMatchObject({ ok: false })
    expect(['MCP_CONNECTION_LOST', 'MCP_UNAVAILABLE']).toContain(result.error.code)
    expect(h.root.goals.get(agent)).toMatchObject({ phase: 'blocked', roundsStarted: 2 })
    expect(h.root.tools.list().some((tool) => tool.name.startsWith('everything__'))).toBe(false)
    expect(alive(pid)).toBe(false)
  })

  it('goes through the permission modes like any tool: workspace-write asks, so an unattended run is denied', async () => {
    const { h, agent } = await start(stdioConfig(), 'workspace-write')
    // Not read-only by its annotations: a tool the modes cannot place.
    expect(h.root.tools.get('everything__toggle-simulated-logging')?.kind).toBe('other')
    const [toggle] = await turn(h, agent, ['everything__toggle-simulated-logging', {}])
    expect(toggle).toMatchObject({ ok: false, denied: { by: 'permissions', reason: expect.stringMatching(/^everything__toggle-simulated-logging is not one of the workspace tools/) } })
  })

  it('a tool annotated readOnlyHint is classed read: it runs in read-only without asking, unless the classes say otherwise', async () => {
    const first = await start(stdioConfig(), 'read-only')
    expect(first.h.root.tools.get('everything__echo')?.kind).toBe('read')
    const [echo] = await turn(first.h, first.agent, ['everything__echo', { message: 'x' }])
    expect(echo).toMatchObject({ ok: true, content: 'Echo: x' })
    await first.h.dispose()

    const next = h = await createHarness()
    await next.load(await import('@goalkeeper/permissions'), { mode: 'read-only', classes: { everything__echo: 'other' } })
    await next.load(mcp, stdioConfig())
    const [overridden] = await turn(next, await next.createAgent(), ['everything__echo', { message: 'x' }])
    expect(overridden).toMatchObject({ ok: false, denied: { by: 'permissions', reason: expect.stringMatching(/^everything__echo is not one of the workspace tools/) } })
  })

  it('maps the annotations: readOnlyHint is read, anything else other', () => {
    expect([mcp.mcpKind({ readOnlyHint: true }), mcp.mcpKind({ readOnlyHint: true, destructiveHint: false }), mcp.mcpKind({ destructiveHint: true }), mcp.mcpKind({ readOnlyHint: 'yes' }), mcp.mcpKind(undefined)])
      .toEqual(['read', 'read', 'other', 'other', 'other'])
  })

  it('a server that cannot start fails the load, naming it', async () => {
    h = await createHarness()
    await expect(h.load(mcp, { name: 'broken', command: '/nonexistent/server' })).rejects.toThrow(/^mcp server "broken": cannot connect: /)
    await expect(h.load(mcp, { name: 'both', command: 'x', url: 'http://127.0.0.1:1/mcp' })).rejects.toThrow('mcp server "both": give either command (stdio) or url (HTTP), not both')
    await expect(h.load(mcp, { name: 'a__b', command: 'x' })).rejects.toThrow()
  })
})

describe('mcp over streamable HTTP', { timeout: 60_000 }, () => {
  it('lists and calls over HTTP on 127.0.0.1, with an error result and a timeout', async () => {
    const server = await startHttpServer()
    try {
      const { h, agent } = await start({ name: 'web', url: server.url, headers: { 'X-Test': 'yes' }, timeoutMs: 400 })
      expect(h.root.tools.get('web__echo')).toBeTruthy()
      const [echo, error, slow] = await turn(h, agent,
        ['web__echo', { message: 'over http' }],
        ['web__gzip-file-as-resource', { name: 'x.gz', data: 'ftp://example.com/x' }],
        ['web__trigger-long-running-operation', { duration: 30, steps: 30 }])
      expect(echo).toMatchObject({ ok: true, content: 'Echo: over http' })
      expect(error).toMatchObject({ ok: false, error: { code: 'MCP_TOOL_ERROR' } })
      expect(slow).toMatchObject({ ok: false, error: { code: 'MCP_TIMEOUT' } })
    } finally {
      await h?.dispose()
      h = undefined
      await server.stop()
    }
  })
})

/** The server's current process id, as its last `connected` log line names it. */
function serverOf(h: Harness): { pid: number | undefined } {
  return { get pid() { return lastPid(h) } }
}

function lastPid(h: Harness): number | undefined {
  const match = h.logs.map((line) => /\[everything\] connected \(stdio, pid (\d+)\)/.exec(line.text)?.[1]).filter(Boolean).at(-1)
  return match ? Number(match) : undefined
}
