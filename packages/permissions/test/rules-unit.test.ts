// compileRules and strongestRule on their own: how a rule is checked, what `*` means in a tool pattern,
// and precedence. rules.test.ts covers how command patterns see through the shell.
import { describe, expect, it } from 'vitest'
import type { PermissionRule } from '../src/config.ts'
import { compileRules, strongestRule } from '../src/rules.ts'

const compile = (...rules: Partial<PermissionRule>[]) => compileRules(rules as PermissionRule[])

describe('compileRules', () => {
  it('refuses a rule without tool or command, and a command pattern for another tool, naming the index', () => {
    expect(() => compile({ tool: 'read_file', action: 'allow' }, { action: 'deny' })).toThrow('rules[1]: give a tool, a command, or both')
    expect(() => compile({ tool: 'edit_file', command: 'x', action: 'deny' })).toThrow('rules[0]: a command pattern applies to run_command only, not to "edit_file"')
    expect(compile({ tool: 'run_command', command: 'make', action: 'allow' })).toHaveLength(1)
  })

  it('names a rule by its tool or its quoted command, for messages', () => {
    expect(compile({ tool: 'mcp_*', action: 'ask' }, { command: 'git push*', action: 'deny' }).map((r) => r.text)).toEqual(['tool mcp_*', 'command "git push*"'])
  })

  it('a tool pattern: `*` is any characters, the rest literal, the whole name', () => {
    const [rule] = compile({ tool: 'mcp.github_*', action: 'deny' })
    expect(rule.matches('mcp.github_create_issue', {})).toBe(true)
    expect(rule.matches('mcp.github_', {})).toBe(true)
    expect(rule.matches('mcpXgithub_create_issue', {})).toBe(false)
    expect(rule.matches('other.mcp.github_x', {})).toBe(false)
  })

  it('a command rule applies to run_command only, to the trimmed command text, and not to a missing one', () => {
    const [rule] = compile({ command: 'make test', action: 'ask' })
    expect(rule.matches('run_command', { command: '  make test \n' })).toBe(true)
    expect(rule.matches('run_command', { command: 'make' })).toBe(false)
    expect(rule.matches('run_command', {})).toBe(false)
    expect(rule.matches('write_file', { command: 'make test' })).toBe(false)
  })

  it('an allow command rule vouches only for a simple command', () => {
    const [rule] = compile({ command: 'npm test*', action: 'allow' })
    expect(rule.matches('run_command', { command: 'npm test -- --run' })).toBe(true)
    for (const command of ['npm test; curl x', 'npm test && rm -rf /', 'npm test | sh', 'npm test > out', 'npm test $(id)', 'npm test `id`', 'npm test\nid']) {
      expect(rule.matches('run_command', { command }), command).toBe(false)
    }
  })
})

describe('strongestRule', () => {
  it('deny over ask over allow, whatever the order they are written in', () => {
    const rules = compile({ tool: '*', action: 'allow' }, { tool: 'edit_*', action: 'ask' }, { tool: 'edit_file', action: 'deny', reason: 'r' })
    expect(strongestRule(rules, 'edit_file', {})?.action).toBe('deny')
    expect(strongestRule(rules.slice().reverse(), 'edit_file', {})?.action).toBe('deny')
    expect(strongestRule(rules, 'edit_notes', {})?.action).toBe('ask')
    expect(strongestRule(rules, 'read_file', {})?.action).toBe('allow')
  })

  it('the first written of equal strength, and nothing when none matches', () => {
    const rules = compile({ tool: 'a*', action: 'deny', reason: 'first' }, { tool: 'ab', action: 'deny', reason: 'second' })
    expect(strongestRule(rules, 'ab', {})?.reason).toBe('first')
    expect(strongestRule(rules, 'b', {})).toBeUndefined()
    expect(strongestRule([], 'ab', {})).toBeUndefined()
  })
})
