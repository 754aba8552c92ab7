// What a hook's matcher selects: tool names and kinds (with Claude Code's tool names), command and path globs.
import { describe, expect, it } from 'vitest'
import { compileMatcher } from '../src/index.ts'

describe('compileMatcher', () => {
  it('no matcher, "" and "*" match everything', () => {
    for (const m of [undefined, '', '*']) expect(compileMatcher(m)({ tool: 'read_file' })).toBe(true)
  })

  it('a string names tools (| alternatives, * wildcards, Claude Code names and .*), kinds, or the event\'s value', () => {
    const edit = compileMatcher('Edit|Write')
    expect(edit({ tool: 'edit_file' })).toBe(true)
    expect(edit({ tool: 'write_file' })).toBe(true)
    expect(edit({ tool: 'run_command' })).toBe(false)
    expect(compileMatcher('mcp__.*')({ tool: 'mcp__git__log' })).toBe(true)
    expect(compileMatcher('server__*')({ tool: 'server__x' })).toBe(true)
    expect(compileMatcher('execute')({ tool: 'run_command', kind: 'execute' })).toBe(true)
    expect(compileMatcher('read_file')({ tool: 'read_filex' })).toBe(false)
    expect(compileMatcher('startup')({ value: 'startup' })).toBe(true)
    expect(compileMatcher('startup')({ value: 'resume' })).toBe(false)
  })

  it('command globs match the whole command line, * across spaces and slashes', () => {
    const m = compileMatcher({ command: 'git push*' })
    expect(m({ tool: 'run_command', command: 'git push origin main' })).toBe(true)
    expect(m({ tool: 'run_command', command: 'echo git push' })).toBe(false)
    expect(m({ tool: 'read_file', path: 'a' })).toBe(false)
  })

  it('path globs: ** any depth, * within a name, no slash matches the file name anywhere', () => {
    const migrations = compileMatcher({ path: 'migrations/**' })
    expect(migrations({ tool: 'write_file', path: 'migrations/001.sql' })).toBe(true)
    expect(migrations({ tool: 'write_file', path: './migrations/a/b.sql' })).toBe(true)
    expect(migrations({ tool: 'write_file', path: 'src/migrations/x' })).toBe(false)
    const ts = compileMatcher({ tool: 'write_file', path: '*.ts' })
    expect(ts({ tool: 'write_file', path: 'src/deep/a.ts' })).toBe(true)
    expect(ts({ tool: 'write_file', path: 'a.tsx' })).toBe(false)
    expect(ts({ tool: 'edit_file', path: 'a.ts' })).toBe(false)
    expect(compileMatcher({ path: 'src/*.ts' })({ path: 'src/a/b.ts' })).toBe(false)
    expect(compileMatcher({ path: 'src/**/*.ts' })({ path: 'src/a.ts' })).toBe(true)
  })
})
