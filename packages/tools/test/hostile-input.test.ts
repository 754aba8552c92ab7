import type { Context } from 'cordis'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { call, callContext, setup } from './helpers.ts'

let root: Context
let received: unknown[]
beforeEach(async () => {
  root = await setup()
  received = []
  // A permissive schema, so only the pipeline's own checks stand between the model and the tool.
  root.tools.register({ name: 'open', description: 'takes anything', parameters: { type: 'object' }, execute: (args) => (received.push(args), 'ran') })
})
afterEach(async () => {
  await root.fiber.dispose()
})

const run = (name: string, args: unknown) => root.tools.execute(call(name, args), callContext())

/** The recursive merge found in many config helpers: it writes through `__proto__` and `constructor.prototype`. */
function naiveMerge(target: any, source: any): any {
  for (const key in source) {
    if (source[key] && typeof source[key] === 'object') merge(target, key, source[key])
    else target[key] = source[key]
  }
  return target
}
const merge = (target: any, key: string, value: any) => naiveMerge((target[key] ??= {}), value)

describe('hostile arguments', () => {
  it('refuses __proto__ and constructor.prototype keys before a tool can merge them into Object.prototype', async () => {
    root.tools.register({ name: 'merge', description: 'merges', parameters: { type: 'object' }, execute: (args) => (naiveMerge({}, args), 'merged') })
    try {
      for (const raw of ['{"__proto__": {"polluted": "yes"}}', '{"a": [{"__proto__": {"polluted": "yes"}}]}', '{"constructor": {"prototype": {"polluted": "yes"}}}']) {
        const result = await run('merge', raw)
        expect(result.error?.code).toBe('INVALID_ARGUMENTS')
        expect(result.content).toMatch(/"(__proto__|prototype)" is not allowed/)
        expect(({} as Record<string, unknown>).polluted).toBeUndefined()
      }
      // A plain "constructor" key is ordinary data.
      expect((await run('open', { constructor: 'Point(x, y)' })).ok).toBe(true)
    } finally {
      delete (Object.prototype as Record<string, unknown>).polluted
    }
  })

  it('refuses arguments nested too deeply before a tool has to walk them', async () => {
    const depth = 5000
    const raw = '{"a":'.repeat(depth) + '1' + '}'.repeat(depth)
    const result = await run('open', raw)
    expect(result.error?.code).toBe('INVALID_ARGUMENTS')
    expect(result.content).toContain('nest deeper than 64 levels')
    expect(received).toEqual([])
    const fine = '{"a":'.repeat(60) + '1' + '}'.repeat(60)
    expect((await run('open', fine)).ok).toBe(true)
  })

  it('refuses arguments over maxArgumentChars without parsing them', async () => {
    const small = await setup({ maxArgumentChars: 1000 })
    small.tools.register({ name: 'write', description: 'w', parameters: { type: 'object' }, execute: () => 'wrote' })
    const result = await small.tools.execute(call('write', { content: 'x'.repeat(5000) }), callContext())
    expect(result.error?.code).toBe('INVALID_ARGUMENTS')
    expect(result.content).toContain('5014 characters')
    expect(result.content).toContain('the limit is 1000')
    expect((await small.tools.execute(call('write', { content: 'x'.repeat(900) }), callContext())).ok).toBe(true)
    await small.fiber.dispose()
  })

  it('explains arguments that did not arrive as JSON text instead of crashing in the parser', async () => {
    for (const raw of [{ path: 'a.txt' }, 42, ['x']]) {
      const result = await root.tools.execute({ id: 'c', name: 'open', arguments: raw as never }, callContext())
      expect(result.error?.code).toBe('INVALID_JSON')
      expect(result.content).toMatch(/did not arrive as JSON text \(got (an object|number|an array)\)/)
    }
    expect(received).toEqual([])
  })

  it('reports NaN, Infinity and truncated JSON as INVALID_JSON with the parser position', async () => {
    for (const raw of ['{"n": NaN}', '{"n": Infinity}', '{"n": 1', '{"n": 1}}', '{"n": 1} trailing']) {
      const result = await run('open', raw)
      expect(result.error?.code).toBe('INVALID_JSON')
      expect(result.content).toContain('are not valid JSON')
    }
    expect(received).toEqual([])
  })

  it('says when the arguments end abruptly, as when the answer was cut off at the token limit', async () => {
    for (const raw of ['{"path": "a.txt", "content": "abc', '{"a":', '{"a":[1,2', '{"a":1  ']) {
      const result = await run('open', raw)
      expect(result.error?.code).toBe('INVALID_JSON')
      expect(result.content).toContain('The arguments end abruptly')
    }
    expect((await run('open', '{"a":1}x')).content).not.toContain('end abruptly')
  })

  it('names a missing tool name plainly', async () => {
    const result = await root.tools.execute({ id: 'c', name: '', arguments: '{}' }, callContext())
    expect(result.error?.code).toBe('UNKNOWN_TOOL')
    expect(result.content).toBe('The tool call has no name. Available tools: open.')
  })
})

describe('hostile results', () => {
  it('caps a huge error message and error code, not only the content', async () => {
    const small = await setup({ maxContentChars: 1000 })
    small.tools.register({
      name: 'loud', description: 'l', parameters: { type: 'object' },
      execute: () => { throw Object.assign(new Error('e'.repeat(50_000)), { code: 'C'.repeat(10_000) }) },
    })
    small.tools.register({
      name: 'claims', description: 'c', parameters: { type: 'object' },
      execute: () => ({ ok: false, content: 'short', error: { code: 'MINE', message: 'm'.repeat(50_000) } }),
    })
    const loud = await small.tools.execute(call('loud', {}), callContext())
    expect(loud.content.length).toBeLessThan(1200)
    expect(loud.error!.message.length).toBeLessThan(1200)
    expect(loud.error!.code.length).toBeLessThanOrEqual(64)
    const claims = await small.tools.execute(call('claims', {}), callContext())
    expect(claims.content).toBe('short')
    expect(claims.error!.message.length).toBeLessThan(1200)
    expect(claims.error!.message).toContain('[output truncated')
    await small.fiber.dispose()
  })

  it('reads a thrown value that cannot be turned into a string', async () => {
    root.tools.register({ name: 'odd', description: 'o', parameters: { type: 'object' }, execute: () => { throw Object.create(null) } })
    root.tools.register({
      name: 'trap', description: 't', parameters: { type: 'object' },
      execute: () => { throw new Proxy({}, { get: () => { throw new Error('trap') }, getPrototypeOf: () => { throw new Error('trap') } }) },
    })
    for (const name of ['odd', 'trap']) {
      const result = await run(name, {})
      expect(result).toEqual({ ok: false, content: `Tool "${name}" failed with a value that is not an Error.`, error: { code: 'TOOL_FAILED', message: `Tool "${name}" failed with a value that is not an Error.` } })
    }
  })
})
