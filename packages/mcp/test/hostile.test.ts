// Hostile stdio servers (a hand-written one: stderr without newlines, a flood of stderr lines, a 50 MiB
// result, 10,002 tools, a hang, a crash) loaded beside the well-behaved reference server, with the real
// tools pipeline and agent loop; only the model is scripted. The event loop must stay responsive (a
// timer's lag is measured, bounded loosely) and the session must go on.
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import type { Agent } from '@goalkeeper/agent-loop'
import { call, createHarness, done, tools, type Harness } from '@goalkeeper/test-kit'
import * as mcp from '../src/index.ts'
import { connected, stdioConfig } from './everything.ts'

const HOSTILE = fileURLToPath(new URL('./hostile-server.mjs', import.meta.url))
const MiB = 1024 * 1024
/**
 * Loose: on a loaded 2-core machine a process waits for the CPU for a second or more whatever it does; the
 * reader this replaced blocked the loop for 4 to 26 s on 16 MiB of stderr alone.
 */
const MAX_LAG_MS = 4000

let h: Harness | undefined
afterEach(async () => {
  await h?.dispose()
  h = undefined
})

const hostile = (args: (string | number)[], extra: Record<string, unknown> = {}) =>
  ({ name: 'hostile', command: process.execPath, args: [HOSTILE, ...args.map(String)], timeoutMs: 60_000, ...extra })

/** The longest a 20 ms timer fired late while it ran. */
function lagMonitor(every = 20) {
  let max = 0
  let last = performance.now()
  const timer = setInterval(() => {
    const now = performance.now()
    max = Math.max(max, now - last - every)
    last = now
  }, every)
  return () => {
    clearInterval(timer)
    return max
  }
}

async function turn(h: Harness, agent: Agent, ...calls: [string, Record<string, unknown>][]) {
  const before = h.records(agent).length
  h.scripted.push(...calls.map(([name, args]) => tools(call(name, args))), done())
  agent.send({ content: 'go' })
  await agent.whenIdle()
  const records = h.records(agent).slice(before)
  return {
    results: records.filter((record) => record.type === 'tool/result').map((record) => record.data as Record<string, any>),
    outcome: (records.find((record) => record.type === 'turn/end')?.data as any)?.outcome?.kind,
  }
}

const mcpLogs = (h: Harness, pattern: RegExp) => h.logs.filter((line) => line.name === 'mcp' && pattern.test(line.text))

describe('hostile MCP stdio servers', { timeout: 120_000 }, () => {
  it('stderr without newlines, 10,002 tools, a 50 MiB result, a hang and a crash: bounded, and the session goes on', async () => {
    h = await createHarness()
    await h.load(await import('@goalkeeper/permissions'), { mode: 'full' })
    await h.load(mcp, stdioConfig())
    const agent = await h.createAgent()
    // Measured from here: what came before is module loading and the reference server's start.
    const stopLag = lagMonitor()
    await h.load(mcp, hostile(['--stderr-bytes', 16 * MiB, '--tools', 10_002], { maxResultChars: 5000 }))

    // 16 MiB of stderr without a newline: logged once, cut, and never held whole.
    expect(mcpLogs(h, /^\[hostile\] E{4096} … \(a line over 4096 bytes: the rest of it is not logged\)$/)).toHaveLength(1)
    expect(mcpLogs(h, /^\[hostile\] E/)).toHaveLength(1)
    // 10,002 tools: 64 offered (maxTools), a warning names what was left out.
    const offered = h.root.tools.list().filter((tool) => tool.name.startsWith('hostile__'))
    expect(offered).toHaveLength(64)
    expect(mcpLogs(h, /^\[hostile\] 9938 of 10002 tools not offered, over maxTools \(64\): extra_64, extra_65, .* and 9928 more$/)).toHaveLength(1)

    const first = await turn(h, agent,
      ['hostile__big', { bytes: 50 * MiB }],
      ['hostile__big', { bytes: 3 * MiB }],
      ['hostile__echo', { text: 'still connected' }],
      ['everything__echo', { message: 'the neighbour' }],
    )
    const [huge, large, echo, neighbour] = first.results
    // Over maxMessageBytes (4 MiB): read from its ends, cut, the connection kept.
    expect(huge).toMatchObject({ ok: true })
    expect(huge.content).toMatch(/^BEGIN x{4994}\n\[The result was cut: the server sent 524287\d\d bytes; only the first 5000 characters are shown\. Ask for less/)
    // Under it: parsed, then cut to maxResultChars.
    expect(large.content).toMatch(/^BEGIN x{4994}\n\[The result was cut: the server sent 31456\d\d characters; only the first 5000 characters are shown\./)
    expect(echo).toMatchObject({ ok: true, content: 'echo: still connected' })
    expect(neighbour).toMatchObject({ ok: true, content: 'Echo: the neighbour' })
    expect(first.outcome).toBe('completed')
    expect(mcpLogs(h, /connection lost/)).toEqual([])
    expect(mcpLogs(h, /\[hostile\] a message of 52428\d+ bytes is over maxMessageBytes \(4194304\): its result is cut/)).toHaveLength(1)

    // A crash mid-call: that call fails, the server is started again, and the session goes on.
    const back = connected(h.root, 'hostile')
    const crashed = await turn(h, agent, ['hostile__crash', {}])
    expect(crashed.results[0]).toMatchObject({ ok: false, error: { code: 'MCP_CONNECTION_LOST' } })
    await back
    const after = await turn(h, agent, ['hostile__echo', { text: 'back' }], ['everything__echo', { message: 'fine' }])
    expect(after.results.map((result) => result.content)).toEqual(['echo: back', 'Echo: fine'])

    const lag = stopLag()
    console.log(`longest timer lag: ${Math.round(lag)} ms`)
    expect(lag).toBeLessThan(MAX_LAG_MS)
  })

  it('a flood of stderr lines is logged at a bounded rate; a hung call and a server that never answers the handshake end in time', async () => {
    h = await createHarness()
    await h.load(await import('@goalkeeper/permissions'), { mode: 'full' })
    await h.load(mcp, stdioConfig())
    const stopLag = lagMonitor()
    await h.load(mcp, hostile(['--stderr-lines', 200_000]))
    const noise = mcpLogs(h, /^\[hostile\] noise line/)
    expect(noise.length).toBeGreaterThan(0)
    // At most 50 a second: the flood takes far less than the 20 seconds that 1000 lines would need.
    expect(noise.length).toBeLessThan(1000)
    await expect(h.load(mcp, hostile(['--hang-start'], { name: 'silent', connectTimeoutMs: 1000 }))).rejects.toThrow(/^mcp server "silent": cannot connect: /)
    const agent = await h.createAgent()
    await h.load(mcp, hostile([], { name: 'slow', timeoutMs: 1000 }))
    const { results, outcome } = await turn(h, agent, ['slow__hang', {}], ['slow__echo', { text: 'ok' }], ['hostile__echo', { text: 'ok' }], ['everything__echo', { message: 'ok' }])
    expect(results[0]).toMatchObject({ ok: false, error: { code: 'MCP_TIMEOUT' } })
    expect(results.slice(1).map((result) => result.content)).toEqual(['echo: ok', 'echo: ok', 'Echo: ok'])
    expect(mcpLogs(h, /connection lost/)).toEqual([])
    expect(outcome).toBe('completed')
    const lag = stopLag()
    console.log(`longest timer lag: ${Math.round(lag)} ms`)
    expect(lag).toBeLessThan(MAX_LAG_MS)
  })

  it('the total cap counts every tool in the registry, so a second server gets only the room left', async () => {
    h = await createHarness()
    const others = h.root.tools.list().length
    await h.load(mcp, hostile(['--tools', 50], { maxTotalTools: others + 10 }))
    expect(h.root.tools.list().filter((tool) => tool.name.startsWith('hostile__'))).toHaveLength(10)
    expect(mcpLogs(h, new RegExp(`^\\[hostile\\] 40 of 50 tools not offered, the registry holds ${others} other tools of at most ${others + 10} \\(maxTotalTools\\): extra_10, `))).toHaveLength(1)
  })
})
