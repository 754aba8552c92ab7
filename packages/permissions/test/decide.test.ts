// decide and classify on their own: every mode against every kind of tool, and the rules over the mode.
// The end-to-end runs (modes.test.ts) cover the gate around them, not each cell of the table.
import { describe, expect, it } from 'vitest'
import type { ToolKind } from '@goalkeeper/tools'
import type { PermissionRule } from '../src/config.ts'
import { classify, decide } from '../src/decide.ts'
import { compileRules } from '../src/rules.ts'

// The tools as the packages that define them declare their kinds; the others declare none.
const KINDS: Record<string, ToolKind> = { read_file: 'read', edit_file: 'edit', run_command: 'execute', update_goal: 'session' }
const tool = (name: string) => ({ name, ...(KINDS[name] && { kind: KINDS[name] }) })

const classes = { fetch_url: 'other', note: 'session', deploy: 'command' } as const
const byKind = { read: 'read_file', write: 'edit_file', command: 'run_command', session: 'update_goal', other: 'browse' } as const

describe('classify', () => {
  it('a configured class first, then the one of the tool\'s kind, else other', () => {
    expect(classify(tool('read_file'), {})).toBe('read')
    expect(classify(tool('read_file'), { read_file: 'write' })).toBe('write')
    expect(classify(tool('deploy'), classes)).toBe('command')
    expect(classify(tool('browse'), classes)).toBe('other')
  })
})

describe('decide, mode by kind of tool', () => {
  const allowed = {
    'read-only': ['read', 'session'],
    'workspace-write': ['read', 'session', 'write', 'command'],
    full: ['read', 'session', 'write', 'command', 'other'],
  } as const
  for (const [mode, kinds] of Object.entries(allowed) as [keyof typeof allowed, readonly string[]][]) {
    it(mode, () => {
      const table = Object.fromEntries(Object.entries(byKind).map(([kind, name]) => [kind, decide(mode, [], {}, tool(name), {}).kind]))
      expect(table).toEqual(Object.fromEntries(Object.keys(byKind).map((kind) => [kind, kinds.includes(kind) ? 'allow' : 'ask'])))
    })
  }

  it('says why it asks, in the mode\'s and the tool\'s words', () => {
    expect(decide('read-only', [], {}, tool('edit_file'), {})).toMatchSnapshot('read-only, write')
    expect(decide('read-only', [], {}, tool('run_command'), { command: 'ls' })).toMatchSnapshot('read-only, command')
    expect(decide('workspace-write', [], classes, tool('fetch_url'), {})).toMatchSnapshot('workspace-write, other')
    expect(decide('full', [], {}, tool('browse'), {})).toEqual({ kind: 'allow', by: 'mode' })
  })
})

describe('decide, rules over the mode', () => {
  const rules = compileRules([
    { tool: 'fetch_*', action: 'allow' },
    { command: 'npm test*', action: 'allow' },
    { command: 'git push*', action: 'deny', reason: 'pushing is for people' },
    { command: 'rm *', action: 'deny' },
    { tool: 'edit_file', action: 'ask' },
  ] as Partial<PermissionRule>[] as PermissionRule[])

  it('an allow rule lets through what the mode would ask about', () => {
    expect(decide('read-only', rules, classes, tool('fetch_url'), {})).toEqual({ kind: 'allow', by: 'rule' })
    expect(decide('read-only', rules, {}, tool('run_command'), { command: 'npm test -- --run' })).toEqual({ kind: 'allow', by: 'rule' })
  })

  it('a deny or ask rule holds even in full mode, with the rule\'s reason or its own words', () => {
    expect(decide('full', rules, {}, tool('run_command'), { command: 'git push origin main' })).toEqual({ kind: 'deny', reason: 'pushing is for people' })
    expect(decide('full', rules, {}, tool('run_command'), { command: 'rm -rf build' })).toMatchSnapshot('deny without a reason')
    expect(decide('full', rules, {}, tool('edit_file'), { path: 'a.ts' })).toMatchSnapshot('ask rule')
  })

  it('deny beats an allow that matches the same call', () => {
    expect(decide('full', rules, {}, tool('run_command'), { command: 'npm test && git push' }).kind).toBe('deny')
  })

  it('no matching rule leaves it to the mode', () => {
    expect(decide('workspace-write', rules, {}, tool('run_command'), { command: 'make' })).toEqual({ kind: 'allow', by: 'mode' })
    expect(decide('read-only', rules, {}, tool('run_command'), { command: 'make' }).kind).toBe('ask')
  })
})
