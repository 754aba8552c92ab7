import { execFileSync } from 'node:child_process'
import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { callContext, setup, type Setup } from './helpers.ts'

let t: Setup
beforeEach(async () => {
  t = await setup()
})
afterEach(async () => {
  await t.dispose()
})

const entries = async () => (await fs.readdir(t.workspace)).sort()

/** The arguments each tool needs to act on `p`. */
const argsFor = (tool: string, p: string) => (tool === 'write_file' ? { path: p, content: 'x' } : tool === 'search' ? { pattern: 'x', path: p } : { path: p })

describe('path input a model might send', () => {
  it('refuses ~ (it is not expanded) instead of creating a directory named "~"', async () => {
    for (const p of ['~', '~/notes.txt', '~root/.bashrc']) {
      const result = await t.run('write_file', { path: p, content: 'x' })
      expect(result.error?.code).toBe('INVALID_PATH')
      expect(result.content).toContain('"~" is not expanded')
    }
    expect(await entries()).toEqual([])
    // The escape hatch for a file really named like that.
    expect((await t.run('write_file', { path: './~backup', content: 'x' })).ok).toBe(true)
  })

  it('refuses backslashes instead of creating files with "\\" in their names', async () => {
    for (const p of ['..\\outside\\x.txt', 'src\\index.ts', 'C:\\Windows\\win.ini']) {
      const result = await t.run('write_file', { path: p, content: 'x' })
      expect(result.error?.code).toBe('INVALID_PATH')
      expect(result.content).toContain('Use "/"')
    }
    expect((await t.run('run_command', { command: 'pwd', cwd: '..\\..' })).error?.code).toBe('INVALID_PATH')
    expect(await entries()).toEqual([])
    expect(await fs.readdir(t.outside)).toEqual(['secret.txt'])
  })

  it('refuses very long paths and names with a clear error, without echoing them whole', async () => {
    const longName = 'a'.repeat(300)
    const deep = 'abc/'.repeat(1200) + 'x'
    const huge = 'b'.repeat(100_000)
    for (const [tool, p] of [['read_file', longName], ['write_file', deep], ['list_dir', huge], ['search', deep]] as const) {
      const result = await t.run(tool, argsFor(tool, p))
      expect(result.error?.code).toBe('INVALID_PATH')
      expect(result.content).toMatch(/too long/)
      expect(result.content.length).toBeLessThan(400)
    }
    expect(await entries()).toEqual([])
  })

  it('reports a loop of symbolic links as PATH_LOOP', async () => {
    await fs.symlink('loop-b', path.join(t.workspace, 'loop-a'))
    await fs.symlink('loop-a', path.join(t.workspace, 'loop-b'))
    for (const [tool, p] of [['read_file', 'loop-a'], ['write_file', 'loop-a'], ['write_file', 'loop-b/child.txt'], ['list_dir', 'loop-a']] as const) {
      const result = await t.run(tool, argsFor(tool, p))
      expect(result.error?.code).toBe('PATH_LOOP')
      expect(result.content).toContain('loop of symbolic links')
    }
  })
})

describe('symbolic links and special files', () => {
  it('works inside a root that is itself a symbolic link, and still refuses the way out', async () => {
    const link = path.join(t.dir, 'ws-link')
    await fs.symlink(t.workspace, link)
    const run = (name: string, args: unknown) => t.root.tools.execute({ id: 'c', name, arguments: JSON.stringify(args) }, callContext(link))
    expect((await run('write_file', { path: 'in.txt', content: 'hi\n' })).ok).toBe(true)
    expect((await run('read_file', { path: path.join(link, 'in.txt') })).content).toBe('     1\thi')
    expect((await run('read_file', { path: path.join(t.workspace, 'in.txt') })).content).toBe('     1\thi')
    expect((await run('read_file', { path: '../outside/secret.txt' })).error?.code).toBe('PATH_OUTSIDE_ROOT')
    expect((await run('read_file', { path: path.join(t.outside, 'secret.txt') })).error?.code).toBe('PATH_OUTSIDE_ROOT')
    expect((await run('run_command', { command: 'pwd' })).content.split('\n')[0]).toBe(t.workspace)
  })

  it('a link at the top of the root to "/" or ".." is listed, never entered or searched', async () => {
    await fs.symlink('/', path.join(t.workspace, 'slash'))
    await fs.symlink('..', path.join(t.workspace, 'up'))
    await fs.symlink(path.join(t.outside, 'secret.txt'), path.join(t.workspace, 'secret-link.txt'))
    await fs.writeFile(path.join(t.workspace, 'mine.txt'), 'nothing to see\n')
    expect((await t.run('list_dir', { depth: 5 })).content.split('\n')).toEqual(['mine.txt', 'secret-link.txt@', 'slash@', 'up@'])
    expect((await t.run('search', { pattern: 'secret' })).content).toMatch(/^No matches for \/secret\/i in \. \(1 file\(s\) searched\)\.$/)
    for (const p of ['slash', 'up', 'up/outside', 'slash/etc']) {
      expect((await t.run('list_dir', { path: p })).error?.code).toBe('PATH_OUTSIDE_ROOT')
      expect((await t.run('search', { pattern: 'secret', path: p })).error?.code).toBe('PATH_OUTSIDE_ROOT')
    }
  })

  it('write_file refuses a FIFO instead of blocking on it', async () => {
    execFileSync('mkfifo', [path.join(t.workspace, 'pipe')])
    const result = await t.run('write_file', { path: 'pipe', content: 'x' })
    expect(result.error?.code).toBe('NOT_A_FILE')
    expect((await t.run('edit_file', { path: 'pipe', old_string: 'a', new_string: 'b' })).error?.code).toBe('NOT_A_FILE')
  })

  it('edit_file refuses a file too large to hold in memory', async () => {
    const file = path.join(t.workspace, 'huge.log')
    const handle = await fs.open(file, 'w')
    await handle.truncate(64 * 1024 * 1024)
    await handle.close()
    const result = await t.run('edit_file', { path: 'huge.log', old_string: 'a', new_string: 'b' })
    expect(result.error?.code).toBe('FILE_TOO_LARGE')
    expect(result.content).toContain('16 MiB')
  })
})

describe('every tool, every way out', () => {
  /** Each tool's arguments for acting on `p`; run_command takes it as its cwd. */
  const attempts: Record<string, (p: string) => Record<string, unknown>> = {
    read_file: (p) => ({ path: p }),
    write_file: (p) => ({ path: p, content: 'pwned' }),
    edit_file: (p) => ({ path: p, old_string: 'top', new_string: 'pwned' }),
    list_dir: (p) => ({ path: p }),
    search: (p) => ({ pattern: 'secret', path: p }),
    run_command: (p) => ({ command: 'cat secret.txt; echo pwned > pwned.txt', cwd: p }),
  }

  it('refuses each escape with a clear code and leaves the outside untouched', async () => {
    const ws = (name: string) => path.join(t.workspace, name)
    await fs.symlink(path.join(t.outside, 'secret.txt'), ws('file-link'))
    await fs.symlink(t.outside, ws('dir-link'))
    await fs.symlink(path.join(t.outside, 'missing'), ws('dangling'))
    await fs.symlink('dir-link', ws('chain'))
    const escapes: Record<string, string> = {
      '..': 'PATH_OUTSIDE_ROOT',
      '../outside': 'PATH_OUTSIDE_ROOT',
      [t.outside]: 'PATH_OUTSIDE_ROOT',
      [path.join(t.outside, 'secret.txt')]: 'PATH_OUTSIDE_ROOT',
      '/': 'PATH_OUTSIDE_ROOT',
      'file-link': 'PATH_OUTSIDE_ROOT',
      'dir-link': 'PATH_OUTSIDE_ROOT',
      'dir-link/secret.txt': 'PATH_OUTSIDE_ROOT',
      'dangling': 'PATH_OUTSIDE_ROOT',
      'dangling/below': 'PATH_OUTSIDE_ROOT',
      'chain/secret.txt': 'PATH_OUTSIDE_ROOT',
      'a\u0000b': 'INVALID_PATH',
      '~': 'INVALID_PATH',
      '..\\outside': 'INVALID_PATH',
    }
    for (const [tool, args] of Object.entries(attempts)) {
      for (const [p, code] of Object.entries(escapes)) {
        const result = await t.run(tool, args(p))
        expect({ tool, p, code: result.error?.code }).toEqual({ tool, p, code })
        expect(result.content).not.toContain('top secret')
      }
    }
    expect((await fs.readdir(t.outside)).sort()).toEqual(['secret.txt'])
    expect(await fs.readFile(path.join(t.outside, 'secret.txt'), 'utf8')).toBe('top secret\n')
  })
})
