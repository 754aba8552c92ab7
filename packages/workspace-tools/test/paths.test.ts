import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { setup, type Setup } from './helpers.ts'

let t: Setup
beforeEach(async () => {
  t = await setup()
})
afterEach(async () => {
  await t.dispose()
})

const exists = (file: string) => fs.lstat(file).then(() => true, () => false)

describe('paths stay inside the root', () => {
  it('refuses .. escapes', async () => {
    for (const p of ['../outside/secret.txt', 'a/../../outside/secret.txt', '..']) {
      const result = await t.run('read_file', { path: p })
      expect(result.error?.code).toBe('PATH_OUTSIDE_ROOT')
      expect(result.content).toContain(`Path "${p}" is outside the workspace root (${t.workspace})`)
    }
    const write = await t.run('write_file', { path: '../outside/new.txt', content: 'x' })
    expect(write.error?.code).toBe('PATH_OUTSIDE_ROOT')
    expect(await exists(path.join(t.outside, 'new.txt'))).toBe(false)
  })

  it('refuses absolute paths elsewhere and allows absolute paths inside the root', async () => {
    expect((await t.run('read_file', { path: '/etc/passwd' })).error?.code).toBe('PATH_OUTSIDE_ROOT')
    expect((await t.run('read_file', { path: path.join(t.outside, 'secret.txt') })).error?.code).toBe('PATH_OUTSIDE_ROOT')
    // A sibling whose name merely starts with the root's name is still outside.
    await fs.mkdir(`${t.workspace}2`)
    expect((await t.run('list_dir', { path: `${t.workspace}2` })).error?.code).toBe('PATH_OUTSIDE_ROOT')
    await fs.writeFile(path.join(t.workspace, 'in.txt'), 'inside\n')
    const inside = await t.run('read_file', { path: path.join(t.workspace, 'in.txt') })
    expect(inside).toEqual({ ok: true, content: '     1\tinside' })
  })

  it('refuses a symlink to a file outside', async () => {
    await fs.symlink(path.join(t.outside, 'secret.txt'), path.join(t.workspace, 'link.txt'))
    const read = await t.run('read_file', { path: 'link.txt' })
    expect(read.error?.code).toBe('PATH_OUTSIDE_ROOT')
    expect(read.content).toContain('symbolic link')
    expect(read.content).not.toContain('top secret')
    expect((await t.run('write_file', { path: 'link.txt', content: 'pwned' })).error?.code).toBe('PATH_OUTSIDE_ROOT')
    expect((await t.run('edit_file', { path: 'link.txt', old_string: 'top', new_string: 'pwned' })).error?.code).toBe('PATH_OUTSIDE_ROOT')
    expect(await fs.readFile(path.join(t.outside, 'secret.txt'), 'utf8')).toBe('top secret\n')
  })

  it('refuses a new file below a symlinked directory that points outside', async () => {
    await fs.symlink(t.outside, path.join(t.workspace, 'out'))
    const result = await t.run('write_file', { path: 'out/sub/new.txt', content: 'x' })
    expect(result.error?.code).toBe('PATH_OUTSIDE_ROOT')
    expect(await exists(path.join(t.outside, 'sub'))).toBe(false)
    expect((await t.run('list_dir', { path: 'out' })).error?.code).toBe('PATH_OUTSIDE_ROOT')
    expect((await t.run('search', { pattern: 'secret', path: 'out' })).error?.code).toBe('PATH_OUTSIDE_ROOT')
    expect((await t.run('run_command', { command: 'pwd', cwd: 'out' })).error?.code).toBe('PATH_OUTSIDE_ROOT')
  })

  it('refuses a dangling symlink whose target is outside, even through a chain of links', async () => {
    await fs.symlink(path.join(t.outside, 'created-by-link.txt'), path.join(t.workspace, 'dangling'))
    await fs.symlink('dangling', path.join(t.workspace, 'chain'))
    for (const p of ['dangling', 'chain']) {
      expect((await t.run('write_file', { path: p, content: 'x' })).error?.code).toBe('PATH_OUTSIDE_ROOT')
    }
    expect(await exists(path.join(t.outside, 'created-by-link.txt'))).toBe(false)
  })

  it('allows symlinks that stay inside the root', async () => {
    await fs.mkdir(path.join(t.workspace, 'real'))
    await fs.symlink('real', path.join(t.workspace, 'alias'))
    const write = await t.run('write_file', { path: 'alias/deep/file.txt', content: 'ok\n' })
    expect(write.ok).toBe(true)
    expect(await fs.readFile(path.join(t.workspace, 'real/deep/file.txt'), 'utf8')).toBe('ok\n')
    expect((await t.run('read_file', { path: 'alias/deep/file.txt' })).content).toBe('     1\tok')
  })

  it('every tool follows links that stay inside: chains, absolute targets, a dangling one for a new file', async () => {
    const ws = (name: string) => path.join(t.workspace, name)
    await fs.mkdir(ws('real/sub'), { recursive: true })
    await fs.writeFile(ws('real/sub/f.txt'), 'one\n')
    await fs.symlink('real', ws('alias'))
    await fs.symlink('alias/sub', ws('chain'))
    await fs.symlink(ws('real/sub'), ws('absolute'))
    await fs.symlink('real/sub/new.txt', ws('pending'))
    for (const p of ['alias/sub', 'chain', 'absolute']) {
      expect((await t.run('read_file', { path: `${p}/f.txt` })).content).toBe('     1\tone')
      expect((await t.run('list_dir', { path: p })).content).toBe('f.txt')
      expect((await t.run('search', { pattern: 'one', path: p })).content).toBe('real/sub/f.txt:1: one')
      expect((await t.run('run_command', { command: 'pwd', cwd: p })).content.split('\n')[0]).toBe(ws('real/sub'))
    }
    expect((await t.run('edit_file', { path: 'chain/f.txt', old_string: 'one', new_string: 'two' })).ok).toBe(true)
    expect((await t.run('write_file', { path: 'pending', content: 'new\n' })).content).toBe('Created pending (1 lines, 4 bytes).')
    expect(await fs.readFile(ws('real/sub/new.txt'), 'utf8')).toBe('new\n')
    expect(await fs.readFile(ws('real/sub/f.txt'), 'utf8')).toBe('two\n')
  })

  it('refuses NUL bytes in paths', async () => {
    expect((await t.run('read_file', { path: 'a\u0000b' })).error?.code).toBe('INVALID_PATH')
  })
})
