import { execFileSync } from 'node:child_process'
import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { globMatcher } from '../src/glob.ts'
import { setup, type Setup } from './helpers.ts'

let t: Setup
beforeEach(async () => {
  t = await setup({ maxSearchResults: 5, maxListEntries: 8 })
  const files: Record<string, string> = {
    'b.txt': 'Hello world\n',
    'a.md': 'hello docs\nsecond line\n',
    'src/index.ts': 'export const greeting = "hello"\nexport function main() {}\n',
    'src/util/deep.ts': 'function helper() { return 1 }\n',
    'node_modules/pkg/index.js': 'hello from a dependency\n',
    '.git/config': 'hello from git\n',
  }
  for (const [name, content] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(t.workspace, name)), { recursive: true })
    await fs.writeFile(path.join(t.workspace, name), content)
  }
  await fs.writeFile(path.join(t.workspace, 'image.bin'), Buffer.concat([Buffer.from('hello'), Buffer.from([0, 1, 2])]))
})
afterEach(async () => {
  await t.dispose()
})

describe('list_dir', () => {
  it('lists direct children sorted, with directories marked', async () => {
    expect((await t.run('list_dir', {})).content.split('\n')).toEqual([
      '.git/ (not listed)',
      'a.md',
      'b.txt',
      'image.bin',
      'node_modules/ (not listed)',
      'src/',
    ])
  })

  it('recurses to the given depth without entering dependency or VCS directories', async () => {
    expect((await t.run('list_dir', { path: 'src', depth: 2 })).content.split('\n')).toEqual(['index.ts', 'util/', 'util/deep.ts'])
    expect((await t.run('list_dir', { path: 'src' })).content.split('\n')).toEqual(['index.ts', 'util/'])
  })

  it('marks symlinks without following them', async () => {
    await fs.symlink(t.outside, path.join(t.workspace, 'src/link'))
    expect((await t.run('list_dir', { path: 'src', depth: 3 })).content.split('\n')).toEqual(['index.ts', 'link@', 'util/', 'util/deep.ts'])
  })

  it('caps the listing with a note', async () => {
    for (let i = 0; i < 10; i++) await fs.writeFile(path.join(t.workspace, `src/f${i}.ts`), '')
    const lines = (await t.run('list_dir', { path: 'src' })).content.split('\n')
    expect(lines).toHaveLength(9)
    expect(lines.at(-1)).toBe('[Listing stopped at 8 entries; list a subdirectory or use a smaller depth.]')
  })

  it('reports empty directories, files and missing paths', async () => {
    await fs.mkdir(path.join(t.workspace, 'empty'))
    expect((await t.run('list_dir', { path: 'empty' })).content).toBe('(empty is empty)')
    expect((await t.run('list_dir', { path: 'a.md' })).error?.code).toBe('NOT_A_DIRECTORY')
    expect((await t.run('list_dir', { path: 'missing' })).error?.code).toBe('NOT_FOUND')
    expect((await t.run('list_dir', { depth: 9 })).error?.code).toBe('INVALID_ARGUMENTS')
  })
})

describe('search', () => {
  it('finds matching lines case-insensitively by default, skipping dependencies, .git and binaries', async () => {
    expect((await t.run('search', { pattern: 'hello' })).content.split('\n')).toEqual([
      'a.md:1: hello docs',
      'b.txt:1: Hello world',
      'src/index.ts:1: export const greeting = "hello"',
    ])
  })

  it('can match case exactly', async () => {
    expect((await t.run('search', { pattern: 'Hello', case_sensitive: true })).content).toBe('b.txt:1: Hello world')
  })

  it('filters by glob on names or paths and searches below a path', async () => {
    expect((await t.run('search', { pattern: 'function', glob: '*.ts' })).content.split('\n')).toEqual([
      'src/index.ts:2: export function main() {}',
      'src/util/deep.ts:1: function helper() { return 1 }',
    ])
    expect((await t.run('search', { pattern: 'function', glob: 'util/**' , path: 'src' })).content).toBe('src/util/deep.ts:1: function helper() { return 1 }')
    expect((await t.run('search', { pattern: 'hello', path: 'a.md' })).content).toBe('a.md:1: hello docs')
  })

  it('caps results with a note', async () => {
    await fs.writeFile(path.join(t.workspace, 'many.txt'), 'match\n'.repeat(20))
    const lines = (await t.run('search', { pattern: 'match', path: 'many.txt' })).content.split('\n')
    expect(lines).toHaveLength(6)
    expect(lines[4]).toBe('many.txt:5: match')
    expect(lines[5]).toBe('[Showing the first 5 matching lines; narrow the pattern, path or glob to see the rest.]')
  })

  it('says when nothing matched', async () => {
    expect((await t.run('search', { pattern: 'zebra' })).content).toMatch(/^No matches for \/zebra\/i in \. \(\d+ file\(s\) searched\)\.$/)
  })

  it('refuses special files instead of blocking on them, and skips them in directories', async () => {
    execFileSync('mkfifo', [path.join(t.workspace, 'src/pipe')])
    expect((await t.run('search', { pattern: 'x', path: 'src/pipe' })).error?.code).toBe('NOT_A_FILE')
    expect((await t.run('read_file', { path: 'src/pipe' })).error?.code).toBe('NOT_A_FILE')
    expect((await t.run('search', { pattern: 'helper', path: 'src' })).content).toBe('src/util/deep.ts:1: function helper() { return 1 }')
  })

  it('explains an invalid regular expression', async () => {
    const result = await t.run('search', { pattern: 'main(' })
    expect(result.error?.code).toBe('INVALID_REGEX')
    expect(result.content).toContain('Unterminated group')
    expect(result.content).toContain('backslash')
  })
})

describe('globs', () => {
  it('match names without a slash and relative paths with one', () => {
    const ts = globMatcher('*.{ts,tsx}')
    expect(['a.ts', 'src/b.tsx', 'deep/x/c.ts'].every(ts)).toBe(true)
    expect(ts('a.js')).toBe(false)
    const nested = globMatcher('src/**/*.test.ts')
    expect(nested('src/a.test.ts')).toBe(true)
    expect(nested('src/x/y/a.test.ts')).toBe(true)
    expect(nested('lib/a.test.ts')).toBe(false)
    expect(globMatcher('file?.[!x]s')('file1.ts')).toBe(true)
    expect(globMatcher('file?.[!x]s')('file1.xs')).toBe(false)
    expect(globMatcher('a.c++')('a.c++')).toBe(true)
    expect(() => globMatcher('{a,b')).toThrow(/unbalanced/)
  })

  it('keep their meaning for **, classes and nested alternatives', () => {
    const any = globMatcher('**/*.md')
    expect(['a.md', 'x/a.md', 'x/y/a.md'].every(any)).toBe(true)
    expect(any('xa.md/b')).toBe(false)
    expect(globMatcher('src/**/x')('src/ax')).toBe(false)
    expect(globMatcher('src/**')('src/a/b/c')).toBe(true)
    expect(globMatcher('{a,{b,c}d}.ts')('cd.ts')).toBe(true)
    expect(globMatcher('{a,{b,c}d}.ts')('c.ts')).toBe(false)
    expect(globMatcher('[a-c]?.txt')('bz.txt')).toBe(true)
    expect(globMatcher('[a-c]?.txt')('dz.txt')).toBe(false)
    expect(globMatcher('*')('a/b')).toBe(true) // no slash in the glob: the name is matched
    expect(globMatcher('x/*')('x/a/b')).toBe(false)
  })

  it('match a pathological glob without catastrophic backtracking', async () => {
    // As a regular expression this takes minutes per name and blocks the event loop.
    const glob = '*a'.repeat(25) + 'b'
    expect(globMatcher(glob)('a'.repeat(250))).toBe(false)
    await fs.writeFile(path.join(t.workspace, 'a'.repeat(250)), 'pattern here\n')
    expect((await t.run('search', { pattern: 'pattern', glob })).content).toMatch(/^No matches/)
    expect(() => globMatcher('{a,b}'.repeat(20))).toThrow(/too many alternatives/)
  })
})
