import type { Context } from 'cordis'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { isReadOnly, kindOf, TOOL_KINDS, type ToolDefinition } from '../src/index.ts'
import { setup } from './helpers.ts'

const tool = (name: string, extra: Partial<ToolDefinition> = {}): ToolDefinition => ({
  name,
  description: `the ${name} tool`,
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false },
  execute: () => 'done',
  ...extra,
})

let root: Context
beforeEach(async () => {
  root = await setup()
})
afterEach(async () => {
  await root.fiber.dispose()
})

describe('ctx.tools registration', () => {
  it('removes a tool when the registering plugin is unloaded', async () => {
    const fiber = await root.plugin({ name: 'fs-tools', inject: ['tools'], apply: (ctx: Context) => { ctx.tools.register(tool('read')) } })
    expect(root.tools.get('read')?.description).toBe('the read tool')
    await fiber.dispose()
    expect(root.tools.get('read')).toBeUndefined()
    expect(root.tools.list()).toEqual([])
  })

  it('returns a disposer and frees the name', () => {
    const dispose = root.tools.register(tool('read'))
    expect(root.tools.list().map((t) => t.name)).toEqual(['read'])
    dispose()
    expect(root.tools.list()).toEqual([])
    root.tools.register(tool('read'))
    expect(root.tools.list().map((t) => t.name)).toEqual(['read'])
  })

  it('refuses duplicate names', () => {
    root.tools.register(tool('read'))
    expect(() => root.tools.register(tool('read'))).toThrow(/tool "read" is already registered/)
  })

  it('checks the name pattern', () => {
    for (const name of ['has space', '', 'x'.repeat(65), 'dots.no', 'ünï']) {
      expect(() => root.tools.register(tool(name))).toThrow(/invalid tool name/)
    }
    root.tools.register(tool('A-z_09'))
    root.tools.register(tool('x'.repeat(64)))
    expect(root.tools.list()).toHaveLength(2)
  })

  it('takes the kind a tool declares, and `other` for a tool that declares none', () => {
    root.tools.register(tool('reader', { kind: 'read', title: (args: { path: string }) => `Read ${args.path}`, locations: (args: { path: string }) => [{ path: args.path }] }))
    root.tools.register(tool('status', { kind: 'session', readOnly: true }))
    root.tools.register(tool('plain'))
    expect([kindOf(root.tools.get('reader')), kindOf(root.tools.get('status')), kindOf(root.tools.get('plain')), kindOf(undefined)]).toEqual(['read', 'session', 'other', 'other'])
    expect([isReadOnly(root.tools.get('reader')), isReadOnly(root.tools.get('status')), isReadOnly(root.tools.get('plain'))]).toEqual([true, true, false])
    expect(root.tools.get('reader')?.title?.({ path: 'a.txt' })).toBe('Read a.txt')
    expect(root.tools.get('reader')?.locations?.({ path: 'a.txt' })).toEqual([{ path: 'a.txt' }])
    // The model sees only names, descriptions and schemas: what a tool says of itself is for the host.
    expect(root.tools.schemas(['reader'])).toEqual([{ name: 'reader', description: 'the reader tool', parameters: expect.any(Object) }])
  })

  it('refuses a kind that is not one of TOOL_KINDS, and describers that are not functions', () => {
    expect(TOOL_KINDS).toEqual(['read', 'edit', 'execute', 'search', 'session', 'other'])
    expect(() => root.tools.register(tool('a', { kind: 'delete' as never }))).toThrow(/tool "a": kind must be one of read, edit, execute, search, session, other, not "delete"/)
    expect(() => root.tools.register(tool('b', { title: 'Read' as never }))).toThrow(/tool "b": title must be a function/)
    expect(() => root.tools.register(tool('c', { readOnly: 'yes' as never }))).toThrow(/tool "c": readOnly must be true or false/)
    expect(root.tools.list()).toEqual([])
  })

  it('compiles the schema at registration and refuses a bad one', () => {
    expect(() => root.tools.register(tool('a', { parameters: { type: 'object', properties: { n: { type: 'integr' } } } }))).toThrow(/tool "a": invalid parameters schema/)
    expect(() => root.tools.register(tool('b', { parameters: { type: 'object', propertes: {} } }))).toThrow(/unknown keyword: "propertes"/)
    expect(() => root.tools.register(tool('c', { parameters: { type: 'string' } }))).toThrow(/type "object"/)
    expect(() => root.tools.register(tool('d', { description: '' }))).toThrow(/description/)
    expect(() => root.tools.register(tool('e', { execute: undefined as never }))).toThrow(/execute/)
    expect(root.tools.list()).toEqual([])
  })

  it('accepts a schema with annotations and formats it does not enforce', () => {
    root.tools.register(tool('f', { parameters: { type: 'object', properties: { url: { type: 'string', format: 'uri', description: 'd', examples: ['x'] } } } }))
    expect(root.tools.get('f')).toBeDefined()
  })

  it('lets the same schema object be registered again after unregistering (even with an $id)', () => {
    const parameters = { $id: 'urn:tool:g', type: 'object', properties: {} }
    const dispose = root.tools.register(tool('g', { parameters }))
    dispose()
    root.tools.register(tool('g', { parameters }))
    expect(root.tools.get('g')).toBeDefined()
  })
})

describe('ctx.tools.schemas', () => {
  it('lists every tool, or the named ones in the given order skipping unknown names', () => {
    root.tools.register(tool('a'))
    root.tools.register(tool('b'))
    root.tools.register(tool('c'))
    expect(root.tools.schemas().map((s) => s.name)).toEqual(['a', 'b', 'c'])
    expect(root.tools.schemas(['c', 'missing', 'a']).map((s) => s.name)).toEqual(['c', 'a'])
    expect(root.tools.schemas(['c'])[0]).toEqual({ name: 'c', description: 'the c tool', parameters: tool('c').parameters })
  })

  it('hands out one frozen copy of each schema, so a request cannot change the registry and no call copies it again', () => {
    const definition = tool('a')
    root.tools.register(definition)
    const [schema] = root.tools.schemas()
    expect(() => (schema.parameters as { required: string[] }).required.push('other')).toThrow(TypeError)
    ;(definition.parameters as { required?: string[] }).required = ['changed by the caller']
    expect(root.tools.schemas()[0].parameters).toEqual(tool('a').parameters)
    expect(root.tools.schemas()[0].parameters).toBe(schema.parameters)
  })
})
