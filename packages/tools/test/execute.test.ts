import type { Context } from 'cordis'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { ToolCallContext } from '../src/index.ts'
import { call, callContext, setup } from './helpers.ts'

let root: Context
beforeEach(async () => {
  root = await setup()
  root.tools.register({
    name: 'read_file',
    description: 'read',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string' },
        start_line: { type: 'integer', minimum: 1 },
        options: { type: 'object', properties: { mode: { enum: ['fast', 'slow'] } }, additionalProperties: false },
        encoding: { type: 'string', default: 'utf8' },
      },
      required: ['path'],
      additionalProperties: false,
    },
    execute: (args) => `read ${JSON.stringify(args)}`,
  })
})
afterEach(async () => {
  await root.fiber.dispose()
})

const run = (name: string, args: unknown, signal?: AbortSignal) => root.tools.execute(call(name, args), callContext(signal))

describe('execute: arguments', () => {
  it('runs a valid call and fills schema defaults', async () => {
    expect(await run('read_file', { path: 'a.txt' })).toEqual({ ok: true, content: 'read {"path":"a.txt","encoding":"utf8"}' })
  })

  it('reports an unknown tool and lists the available ones', async () => {
    root.tools.register({ name: 'list_dir', description: 'list', parameters: { type: 'object' }, execute: () => '' })
    const result = await run('raed_file', {})
    expect(result.ok).toBe(false)
    expect(result.error?.code).toBe('UNKNOWN_TOOL')
    expect(result.content).toBe('Unknown tool "raed_file". Available tools: read_file, list_dir.')
  })

  it('reports invalid JSON with the parser message and a hint', async () => {
    const result = await run('read_file', '{"path": "a.txt",}')
    expect(result.error?.code).toBe('INVALID_JSON')
    expect(result.content).toContain('are not valid JSON')
    expect(result.content).toMatch(/position \d+/)
    expect(result.content).toContain('Send exactly one JSON object')
    expect(result.content).toContain('path (required)')
  })

  it('treats an empty arguments string as {}', async () => {
    root.tools.register({ name: 'now', description: 'time', parameters: { type: 'object', properties: {} }, execute: (args) => JSON.stringify(args) })
    expect(await run('now', '')).toEqual({ ok: true, content: '{}' })
    expect(await run('now', '  \n')).toEqual({ ok: true, content: '{}' })
    const missing = await run('read_file', '')
    expect(missing.error?.code).toBe('INVALID_ARGUMENTS')
    expect(missing.content).toContain('missing required property "path"')
  })

  it('explains schema violations so the model can fix the call', async () => {
    const result = await run('read_file', { start_line: 'two', extra: true, options: { mode: 'warp' } })
    expect(result.ok).toBe(false)
    expect(result.error?.code).toBe('INVALID_ARGUMENTS')
    const lines = result.content.split('\n')
    expect(lines[0]).toBe('Invalid arguments for tool "read_file":')
    expect(lines).toContain('- missing required property "path"')
    expect(lines).toContain('- unexpected property "extra" (not in the schema)')
    expect(lines).toContain('- /start_line must be integer')
    expect(lines).toContain('- /options/mode must be one of "fast", "slow"')
    expect(result.content).toContain('Expected: path (required), start_line, options, encoding.')
    expect(result.error?.message).toBe(result.content)
  })

  it('refuses arguments that are JSON but not an object', async () => {
    for (const args of ['[1, 2]', '"a.txt"', 'null', '42']) {
      const result = await run('read_file', args)
      expect(result.error?.code).toBe('INVALID_ARGUMENTS')
      expect(result.content).toMatch(/must be a JSON object, got (an array|string|null|number)/)
    }
  })
})

describe('execute: outcomes', () => {
  const register = (name: string, execute: (args: any, call: ToolCallContext) => any) =>
    root.tools.register({ name, description: name, parameters: { type: 'object' }, execute })

  it('passes the call context with the call id', async () => {
    let seen: ToolCallContext | undefined
    register('probe', (_args, ctx) => ((seen = ctx), 'ok'))
    await root.tools.execute(call('probe', {}, 'call_42'), callContext())
    expect(seen).toMatchObject({ callId: 'call_42', turn: 2, step: 3, cwd: '/nowhere', turnSources: [{ kind: 'human' }] })
    expect(seen?.agent.id).toBe('agent-1')
    expect(seen?.signal).toBeInstanceOf(AbortSignal)
  })

  it('accepts string and { ok, content } results', async () => {
    register('text', () => 'plain')
    register('good', async () => ({ ok: true, content: 'fine', error: { code: 'IGNORED', message: 'x' } }))
    register('bad', () => ({ ok: false, content: 'nope', error: { code: 'MY_CODE', message: 'why' } }))
    register('bare', () => ({ ok: false, content: 'it broke' }))
    expect(await run('text', {})).toEqual({ ok: true, content: 'plain' })
    expect(await run('good', {})).toEqual({ ok: true, content: 'fine' })
    expect(await run('bad', {})).toEqual({ ok: false, content: 'nope', error: { code: 'MY_CODE', message: 'why' } })
    expect(await run('bare', {})).toEqual({ ok: false, content: 'it broke', error: { code: 'TOOL_FAILED', message: 'it broke' } })
  })

  it('turns any other result into TOOL_FAILED', async () => {
    register('number', () => 42)
    register('nothing', () => undefined)
    register('content', () => ({ ok: true, content: { not: 'a string' } }))
    for (const name of ['number', 'nothing', 'content']) {
      const result = await run(name, {})
      expect(result.error?.code).toBe('TOOL_FAILED')
      expect(result.content).toContain('invalid result')
    }
  })

  it('turns a throwing tool into TOOL_FAILED with its message', async () => {
    register('sync', () => { throw new Error('disk on fire') })
    register('async', async () => { throw new Error('later fire') })
    register('reject', () => Promise.reject(new TypeError('rejected fire')))
    register('string', () => { throw 'just a string' })
    expect(await run('sync', {})).toEqual({ ok: false, content: 'disk on fire', error: { code: 'TOOL_FAILED', message: 'disk on fire' } })
    expect((await run('async', {})).error).toEqual({ code: 'TOOL_FAILED', message: 'later fire' })
    expect((await run('reject', {})).error).toEqual({ code: 'TOOL_FAILED', message: 'rejected fire' })
    expect((await run('string', {})).error).toEqual({ code: 'TOOL_FAILED', message: 'just a string' })
  })

  it('uses the string code of a thrown error', async () => {
    register('coded', () => { throw Object.assign(new Error('outside'), { code: 'PATH_OUTSIDE_ROOT' }) })
    register('numeric', () => { throw Object.assign(new Error('odd'), { code: 7 }) })
    expect((await run('coded', {})).error).toEqual({ code: 'PATH_OUTSIDE_ROOT', message: 'outside' })
    expect((await run('numeric', {})).error?.code).toBe('TOOL_FAILED')
  })

  it('does not run a tool when the signal is already aborted', async () => {
    let ran = false
    register('side', () => ((ran = true), 'x'))
    const controller = new AbortController()
    controller.abort()
    const result = await run('side', {}, controller.signal)
    expect(result.error?.code).toBe('ABORTED')
    expect(ran).toBe(false)
  })

  it('returns ABORTED when the signal aborts during a tool that ignores it', async () => {
    let started!: () => void
    const running = new Promise<void>((resolve) => (started = resolve))
    register('stuck', () => (started(), new Promise(() => {})))
    const controller = new AbortController()
    const pending = run('stuck', {}, controller.signal)
    await running
    controller.abort()
    const result = await pending
    expect(result).toEqual({ ok: false, content: expect.stringContaining('aborted'), error: { code: 'ABORTED', message: expect.any(String) } })
  })

  it('reports ABORTED when a tool rejects because of the abort', async () => {
    register('polite', (_args, ctx) => new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('stopped')))))
    const controller = new AbortController()
    const pending = run('polite', {}, controller.signal)
    controller.abort()
    expect((await pending).error?.code).toBe('ABORTED')
  })
})

describe('execute: content cap', () => {
  it('cuts absurdly large content and says so', async () => {
    const small = await setup({ maxContentChars: 1000 })
    small.tools.register({ name: 'big', description: 'big', parameters: { type: 'object' }, execute: () => 'x'.repeat(5000) })
    small.tools.register({ name: 'fits', description: 'fits', parameters: { type: 'object' }, execute: () => 'y'.repeat(1000) })
    small.tools.register({ name: 'bigfail', description: 'f', parameters: { type: 'object' }, execute: () => { throw new Error('z'.repeat(3000)) } })
    const big = await small.tools.execute(call('big', {}), callContext())
    expect(big.ok).toBe(true)
    expect(big.content.startsWith('x'.repeat(1000) + '\n\n[output truncated')).toBe(true)
    expect(big.content).toContain('5000 characters')
    expect(big.content.length).toBeLessThan(1200)
    expect((await small.tools.execute(call('fits', {}), callContext())).content).toBe('y'.repeat(1000))
    const failed = await small.tools.execute(call('bigfail', {}), callContext())
    expect(failed.content.length).toBeLessThan(1200)
    expect(failed.error?.code).toBe('TOOL_FAILED')
    await small.fiber.dispose()
  })

  it('defaults to 100k characters', async () => {
    root.tools.register({ name: 'huge', description: 'h', parameters: { type: 'object' }, execute: () => 'h'.repeat(150_000) })
    const result = await run('huge', {})
    expect(result.content.slice(0, 100_000)).toBe('h'.repeat(100_000))
    expect(result.content.slice(100_000)).toMatch(/^\n\n\[output truncated: the result had 150000 characters/)
  })
})
