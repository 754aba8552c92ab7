import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { setup, type Setup } from './helpers.ts'

// As on a system without /proc (macOS, a container without it): entries are named by their path.
const probe = vi.hoisted(() => ({ calls: 0 }))
vi.mock('../src/proc-fd.ts', () => ({ descriptorPaths: () => (probe.calls++, false) }))

let t: Setup
beforeEach(async () => {
  t = await setup()
})
afterEach(async () => {
  await t.dispose()
})

describe('without descriptor paths (/proc missing)', () => {
  it('every tool works, through links that stay inside too', async () => {
    await fs.mkdir(path.join(t.workspace, 'real'))
    await fs.symlink('real', path.join(t.workspace, 'alias'))
    expect((await t.run('write_file', { path: 'alias/deep/f.txt', content: 'hello\n' })).content).toBe('Created alias/deep/f.txt (1 lines, 6 bytes).')
    expect((await t.run('edit_file', { path: 'alias/deep/f.txt', old_string: 'hello', new_string: 'hi' })).ok).toBe(true)
    expect((await t.run('read_file', { path: 'real/deep/f.txt' })).content).toBe('     1\thi')
    expect((await t.run('list_dir', { path: 'alias', depth: 2 })).content).toBe('deep/\ndeep/f.txt')
    expect((await t.run('search', { pattern: 'hi', path: 'alias' })).content).toBe('real/deep/f.txt:1: hi')
    expect((await t.run('run_command', { command: 'pwd', cwd: 'alias/deep' })).content.split('\n')[0]).toBe(path.join(t.workspace, 'real/deep'))
    expect(probe.calls).toBeGreaterThan(0)
  })

  it('still refuses links out, as checked before the operation', async () => {
    await fs.symlink(t.outside, path.join(t.workspace, 'out'))
    for (const [tool, args] of [
      ['read_file', { path: 'out/secret.txt' }],
      ['write_file', { path: 'out/new/x.txt', content: 'x' }],
      ['list_dir', { path: 'out' }],
      ['search', { pattern: 'secret', path: 'out' }],
      ['run_command', { command: 'cat secret.txt', cwd: 'out' }],
    ] as const) {
      const result = await t.run(tool, args)
      expect({ tool, code: result.error?.code }).toEqual({ tool, code: 'PATH_OUTSIDE_ROOT' })
    }
    expect(await fs.readdir(t.outside)).toEqual(['secret.txt'])
  })
})
