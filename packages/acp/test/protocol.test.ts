import * as acp from '@agentclientprotocol/sdk'
import { createHarness } from '@goalkeeper/test-kit'
import { afterEach, describe, expect, it } from 'vitest'
import { serveAcp } from '../src/index.ts'

/** serveAcp on raw byte pipes: the test writes lines as a client would (or would not) and reads the answers. */
async function raw() {
  const h = await createHarness()
  const input = new TransformStream<Uint8Array, Uint8Array>()
  const output = new TransformStream<Uint8Array, Uint8Array>()
  const server = serveAcp(h.root, acp.ndJsonStream(output.writable, input.readable), { version: 'test' })
  const writer = input.writable.getWriter()
  const reader = output.readable.pipeThrough(new TextDecoderStream()).getReader()
  let buffered = ''
  const lines: string[] = []
  const next = async (): Promise<any> => {
    while (!lines.length) {
      const { value, done } = await reader.read()
      if (done) throw new Error('the agent closed its output')
      buffered += value
      const parts = buffered.split('\n')
      buffered = parts.pop()!
      lines.push(...parts.filter(Boolean))
    }
    return JSON.parse(lines.shift()!)
  }
  const send = (line: string) => writer.write(new TextEncoder().encode(`${line}\n`))
  const request = async (id: number, method: string, params?: unknown) => {
    await send(JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) }))
    return next()
  }
  cleanups.push(async () => { await writer.close().catch(() => {}); await server.closed; await h.dispose() })
  return { h, server, send, next, request, writer }
}

const cleanups: (() => Promise<void>)[] = []
afterEach(async () => { for (const cleanup of cleanups.splice(0)) await cleanup() })

describe('bad and out-of-order JSON-RPC', () => {
  it('answers each with an error that names the problem, and keeps serving', async () => {
    const { h, send, next, request } = await raw()
    await send('this is not json')
    expect(await next()).toMatchObject({ id: null, error: { code: -32700 } })
    await send('[{"jsonrpc":"2.0","id":1,"method":"initialize"}]')
    expect(await next()).toMatchObject({ id: null, error: { code: -32600, message: expect.stringContaining('batches') } })
    expect(await request(2, 'session/new', { cwd: h.workspace, mcpServers: [] })).toMatchObject({ id: 2, error: { code: -32600, message: expect.stringContaining("initialized before 'session/new'") } })
    expect(await request(3, 'initialize', { protocolVersion: 1 })).toMatchObject({ id: 3, result: { protocolVersion: 1 } })
    expect(await request(4, 'session/new', { mcpServers: [] })).toMatchObject({ id: 4, error: { code: -32602, data: { cwd: expect.anything() } } })
    expect(await request(5, 'session/new', { cwd: `${h.workspace}/missing`, mcpServers: [] })).toMatchObject({ id: 5, error: { code: -32602, message: `cwd: "${h.workspace}/missing" is not a directory` } })
    expect(await request(6, 'session/prompt', { sessionId: 'nope', prompt: [{ type: 'text', text: 'hi' }] })).toMatchObject({ id: 6, error: { code: -32002, data: { sessionId: 'nope' } } })
    expect(await request(7, 'session/teleport', {})).toMatchObject({ id: 7, error: { code: -32601 } })
    const created = await request(8, 'session/new', { cwd: h.workspace, mcpServers: [] })
    const sessionId = created.result.sessionId
    expect(await request(9, 'session/prompt', { sessionId, prompt: [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }] }))
      .toMatchObject({ id: 9, error: { code: -32602, message: expect.stringContaining('prompt[0]: image content is not supported') } })
    expect(await request(10, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: '   ' }] })).toMatchObject({ id: 10, error: { code: -32602, message: 'prompt: the prompt is empty' } })
    // A cancel for a session nobody has is a notification: nothing to answer, nothing breaks.
    await send(JSON.stringify({ jsonrpc: '2.0', method: 'session/cancel', params: { sessionId: 'nope' } }))
    h.scripted.push({ text: 'still here' })
    let answer = await request(11, 'session/prompt', { sessionId, prompt: [{ type: 'text', text: 'hi' }] })
    // Updates come first; the answer to the prompt closes the turn.
    while (answer.method === 'session/update') answer = await next()
    expect(answer).toEqual({ jsonrpc: '2.0', id: 11, result: { stopReason: 'end_turn' } })
  })
})
