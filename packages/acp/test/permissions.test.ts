import { existsSync } from 'node:fs'
import path from 'node:path'
import { call, tools } from '@goalkeeper/test-kit'
import { describe, expect, it } from 'vitest'
import { setup } from './helpers.ts'

const selected = (optionId: string) => ({ outcome: { outcome: 'selected' as const, optionId } })

/** Writes of files ask the person; everything else runs. */
async function asking(timeoutMs = 60_000) {
  const s = await setup({ server: { ask: (review) => review.name === 'write_file', permissionTimeoutMs: timeoutMs } })
  const { sessionId } = await s.client.agent.request('session/new', { cwd: s.h.workspace, mcpServers: [] })
  const write = (file: string) => {
    s.h.scripted.push(tools(call('write_file', { path: file, content: 'x\n' })), { text: 'done' })
    return s.client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: `write ${file}` }] })
  }
  const denial = () => s.h.records(sessionId).filter((record) => record.type === 'tool/result').map((record) => (record.data as any).denied).at(-1)
  return { ...s, sessionId, write, denial }
}

describe('tool permissions through session/request_permission', () => {
  it('asks about the call, with its title and the options, and runs it when allowed', async () => {
    const { h, client, sessionId, write } = await asking()
    client.answers.push(selected('allow_once'))
    expect(await write('a.txt')).toEqual({ stopReason: 'end_turn' })
    expect(existsSync(path.join(h.workspace, 'a.txt'))).toBe(true)
    const [question] = client.permissions
    expect(question.sessionId).toBe(sessionId)
    expect(question.toolCall).toMatchObject({ title: 'Write a.txt', kind: 'edit', status: 'pending', rawInput: { path: 'a.txt', content: 'x\n' } })
    // The question names the same tool call the client was shown.
    expect(question.toolCall.toolCallId).toBe(client.of(sessionId, 'tool_call')[0].toolCallId)
    expect(question.options.map((option) => option.kind)).toEqual(['allow_once', 'allow_always', 'reject_once', 'reject_always'])
    // A call the rule does not cover is not asked about.
    h.scripted.push(tools(call('list_dir')), { text: 'listed' })
    await client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'list' }] })
    expect(client.permissions).toHaveLength(1)
  })

  it('a rejected call does not run; the model and the log learn who refused it', async () => {
    const { h, client, sessionId, write, denial } = await asking()
    client.answers.push(selected('reject_once'))
    expect(await write('a.txt')).toEqual({ stopReason: 'end_turn' })
    expect(existsSync(path.join(h.workspace, 'a.txt'))).toBe(false)
    expect(denial()).toEqual({ by: 'acp', reason: 'the person rejected this call' })
    expect(client.of(sessionId, 'tool_call_update').at(-1)).toMatchObject({ status: 'failed', rawOutput: { ok: false, error: { code: 'DENIED' } } })
    expect(h.scripted.requests.at(-1)!.messages.at(-1)).toMatchObject({ role: 'tool', ok: false, content: 'The call was denied by acp: the person rejected this call' })
  })

  it('no answer from the client means deny', async () => {
    const { h, client, write, denial } = await asking(100)
    client.answers.push('never')
    expect(await write('a.txt')).toEqual({ stopReason: 'end_turn' })
    expect(existsSync(path.join(h.workspace, 'a.txt'))).toBe(false)
    expect(denial()).toEqual({ by: 'acp', reason: 'nobody answered the permission request in the editor within 100 ms; unattended calls are denied' })
  })

  it('"always" answers hold for that tool for the rest of the session', async () => {
    const { h, client, write, denial } = await asking()
    client.answers.push(selected('allow_always'))
    await write('a.txt')
    await write('b.txt')
    expect(client.permissions).toHaveLength(1)
    expect(existsSync(path.join(h.workspace, 'b.txt'))).toBe(true)
    expect(denial()).toBeUndefined()
  })

  it('a cancel while the person is asked ends the turn cancelled and the call does not run', async () => {
    const { h, client, sessionId, write } = await asking()
    client.answers.push('never')
    const prompt = write('a.txt')
    // The person is being asked; cancel as they would.
    await client.asked(1)
    await client.agent.notify('session/cancel', { sessionId })
    expect(await prompt).toEqual({ stopReason: 'cancelled' })
    expect(existsSync(path.join(h.workspace, 'a.txt'))).toBe(false)
    expect(h.records(sessionId).filter((record) => record.type === 'tool/result').map((record) => (record.data as any).error?.code)).toEqual(['ABORTED'])
  })
})

describe('the permission modes over ACP', () => {
  /** The permissions plugin in read-only: writes are what the mode asks about; no `ask` rule of the server's own. */
  async function readOnly(timeoutMs = 60_000) {
    const s = await setup({ server: { permissionTimeoutMs: timeoutMs } })
    await s.h.load(await import('@goalkeeper/permissions'), { mode: 'read-only' })
    const { sessionId } = await s.client.agent.request('session/new', { cwd: s.h.workspace, mcpServers: [] })
    const write = (file: string) => {
      s.h.scripted.push(tools(call('write_file', { path: file, content: 'x\n' })), { text: 'done' })
      return s.client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: `write ${file}` }] })
    }
    const results = () => s.h.records(sessionId).filter((record) => record.type === 'tool/result').map((record) => record.data as any)
    return { ...s, sessionId, write, results }
  }

  it('a call the mode would ask about is asked of the client; the answer is recorded in the session', async () => {
    const { h, client, sessionId, write, results } = await readOnly()
    client.answers.push(selected('allow_always'))
    expect(await write('a.txt')).toEqual({ stopReason: 'end_turn' })
    await write('b.txt')
    expect(client.permissions).toHaveLength(1)
    expect(client.permissions[0].toolCall).toMatchObject({ title: 'Write a.txt', rawInput: { path: 'a.txt' } })
    expect(existsSync(path.join(h.workspace, 'b.txt'))).toBe(true)
    expect(h.records(sessionId).filter((record) => record.type === 'permission/asked').map((record) => record.data))
      .toEqual([expect.objectContaining({ tool: 'write_file', answer: 'session', by: 'acp' })])
    // Reads are within the mode: nobody is asked.
    h.scripted.push(tools(call('list_dir')), { text: 'listed' })
    await client.agent.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'list' }] })
    expect(client.permissions).toHaveLength(1)
    expect(results().every((result) => result.ok)).toBe(true)
  })

  it('no answer from the client denies the call, with the reason', async () => {
    const { h, client, write, results } = await readOnly(100)
    client.answers.push('never')
    expect(await write('a.txt')).toEqual({ stopReason: 'end_turn' })
    expect(existsSync(path.join(h.workspace, 'a.txt'))).toBe(false)
    expect(results().at(-1).denied).toEqual({ by: 'permissions', reason: 'nobody answered the permission request in the editor within 100 ms; unattended calls are denied' })
  })

  it('a rejection denies the call', async () => {
    const { h, client, write, results } = await readOnly()
    client.answers.push(selected('reject_once'))
    await write('a.txt')
    expect(existsSync(path.join(h.workspace, 'a.txt'))).toBe(false)
    expect(results().at(-1).denied).toEqual({ by: 'permissions', reason: 'the person rejected this call' })
  })
})
