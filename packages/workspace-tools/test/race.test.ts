import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { setup, type Setup } from './helpers.ts'

/**
 * Runs after the tools' path check has resolved a path: the moment another process could swap a
 * checked file for a symbolic link. Installed through a mock of `realpath`, so the race is exact.
 */
const race = vi.hoisted(() => ({
  target: '',
  swap: undefined as undefined | (() => Promise<void>),
  /** Runs once, after the next directory read: the moment a walker has seen a subdirectory but not entered it. */
  afterReaddir: undefined as undefined | (() => Promise<void>),
}))

vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>()
  const realpath = (async (target: string, options?: unknown) => {
    const resolved = await (real.realpath as (p: string, o?: unknown) => Promise<string>)(target, options)
    if (race.swap && target === race.target) {
      const swap = race.swap
      race.swap = undefined
      await swap()
    }
    return resolved
  }) as typeof real.realpath
  const readdir = (async (...args: Parameters<typeof real.readdir>) => {
    const entries = await (real.readdir as (...a: unknown[]) => Promise<unknown>)(...args)
    const after = race.afterReaddir
    race.afterReaddir = undefined
    await after?.()
    return entries
  }) as typeof real.readdir
  return { ...real, default: { ...real, realpath, readdir }, realpath, readdir }
})

let t: Setup
beforeEach(async () => {
  t = await setup()
})
afterEach(async () => {
  race.swap = undefined
  race.afterReaddir = undefined
  await t.dispose()
})

/** Arms the swap: right after `name` is checked, it becomes a link to the secret outside the root. */
const swapAfterCheck = (name: string) => {
  const file = path.join(t.workspace, name)
  race.target = file
  race.swap = async () => {
    await fs.rm(file)
    await fs.symlink(path.join(t.outside, 'secret.txt'), file)
  }
}

describe('a file swapped for a symbolic link after the path check (TOCTOU)', () => {
  beforeEach(async () => {
    await fs.writeFile(path.join(t.workspace, 'a.txt'), 'inside\n')
  })

  it('read_file does not follow it', async () => {
    swapAfterCheck('a.txt')
    const result = await t.run('read_file', { path: 'a.txt' })
    expect(race.swap).toBeUndefined()
    expect(result.error?.code).toBe('PATH_OUTSIDE_ROOT')
    expect(result.content).not.toContain('top secret')
  })

  it('write_file does not write through it', async () => {
    swapAfterCheck('a.txt')
    const result = await t.run('write_file', { path: 'a.txt', content: 'pwned' })
    expect(race.swap).toBeUndefined()
    expect(result.error?.code).toBe('PATH_OUTSIDE_ROOT')
    expect(await fs.readFile(path.join(t.outside, 'secret.txt'), 'utf8')).toBe('top secret\n')
  })

  it('edit_file does not edit through it', async () => {
    swapAfterCheck('a.txt')
    const result = await t.run('edit_file', { path: 'a.txt', old_string: 'top', new_string: 'pwned' })
    expect(race.swap).toBeUndefined()
    expect(result.error?.code).toBe('PATH_OUTSIDE_ROOT')
    expect(await fs.readFile(path.join(t.outside, 'secret.txt'), 'utf8')).toBe('top secret\n')
  })

  it('search does not read through it', async () => {
    swapAfterCheck('a.txt')
    const result = await t.run('search', { pattern: 'secret', path: 'a.txt' })
    expect(race.swap).toBeUndefined()
    expect(result.content).not.toContain('top secret')
  })
})

describe('a directory on the way swapped for a symbolic link after the path check', () => {
  const ws = (name: string) => path.join(t.workspace, name)
  beforeEach(async () => {
    await fs.mkdir(ws('d'))
    await fs.writeFile(ws('d/a.txt'), 'inside\n')
    await fs.writeFile(path.join(t.outside, 'a.txt'), 'top secret\n')
  })

  /** Arms the swap: right after `checked` is resolved, `d` is moved aside and a link to `to` takes its place. */
  const swapDirAfterCheck = (checked: string, to = t.outside) => {
    race.target = ws(checked)
    race.swap = async () => {
      await fs.rename(ws('d'), ws('d-aside'))
      await fs.symlink(to, ws('d'))
    }
  }
  const outsideUntouched = async () => {
    expect((await fs.readdir(t.outside)).sort()).toEqual(['a.txt', 'secret.txt'])
    expect(await fs.readFile(path.join(t.outside, 'a.txt'), 'utf8')).toBe('top secret\n')
  }
  const onTheWay = (shown: string) => `"d", on the way to "${shown}", became a symbolic link after it was checked; it was not followed.`

  it('read_file, write_file and edit_file refuse to go through it', async () => {
    for (const [tool, args] of [
      ['read_file', { path: 'd/a.txt' }],
      ['write_file', { path: 'd/a.txt', content: 'pwned' }],
      ['edit_file', { path: 'd/a.txt', old_string: 'top', new_string: 'pwned' }],
    ] as const) {
      swapDirAfterCheck('d/a.txt')
      const result = await t.run(tool, args)
      expect(race.swap).toBeUndefined()
      expect(result).toEqual({ ok: false, content: onTheWay('d/a.txt'), error: { code: 'PATH_OUTSIDE_ROOT', message: onTheWay('d/a.txt') } })
      await fs.rm(ws('d'))
      await fs.rename(ws('d-aside'), ws('d'))
    }
    await outsideUntouched()
  })

  it('write_file creates no missing parent through it', async () => {
    // The longest existing prefix is what gets resolved: here "d".
    swapDirAfterCheck('d')
    const result = await t.run('write_file', { path: 'd/new/deep.txt', content: 'pwned' })
    expect(race.swap).toBeUndefined()
    expect(result.error?.code).toBe('PATH_OUTSIDE_ROOT')
    expect(result.content).toBe(onTheWay('d/new/deep.txt'))
    await outsideUntouched()
  })

  it('list_dir, search and run_command refuse it as their directory', async () => {
    const swappedItself = '"d" became a symbolic link after it was checked; it was not followed.'
    for (const [tool, args] of [
      ['list_dir', { path: 'd' }],
      ['search', { pattern: 'secret', path: 'd' }],
      ['run_command', { command: 'cat a.txt; echo pwned > pwned.txt', cwd: 'd' }],
    ] as const) {
      swapDirAfterCheck('d')
      const result = await t.run(tool, args)
      expect(race.swap).toBeUndefined()
      expect({ tool, code: result.error?.code, content: result.content }).toEqual({ tool, code: 'PATH_OUTSIDE_ROOT', content: swappedItself })
      await fs.rm(ws('d'))
      await fs.rename(ws('d-aside'), ws('d'))
    }
    await outsideUntouched()
  })

  it('list_dir and search do not enter a subdirectory swapped after they read its parent', async () => {
    const swap = async () => {
      await fs.rename(ws('d'), ws('d-aside'))
      await fs.symlink(t.outside, ws('d'))
    }
    race.afterReaddir = swap
    expect((await t.run('list_dir', { depth: 3 })).content.split('\n')).toEqual(['d/ (unreadable)'])
    expect(race.afterReaddir).toBeUndefined()
    await fs.rm(ws('d'))
    await fs.rename(ws('d-aside'), ws('d'))
    race.afterReaddir = swap
    const search = await t.run('search', { pattern: 'secret|inside' })
    expect(race.afterReaddir).toBeUndefined()
    expect(search.content).toBe('No matches for /secret|inside/i in . (0 file(s) searched).')
    await outsideUntouched()
  })

  it('is refused even when the link points inside the root: the tree changed under the call', async () => {
    await fs.mkdir(ws('other'))
    await fs.writeFile(ws('other/a.txt'), 'other\n')
    swapDirAfterCheck('d/a.txt', ws('other'))
    const result = await t.run('read_file', { path: 'd/a.txt' })
    expect(result.error?.code).toBe('PATH_OUTSIDE_ROOT')
    expect(result.content).toBe(onTheWay('d/a.txt'))
    // Called again, the link is resolved like any other and stays inside.
    expect((await t.run('read_file', { path: 'd/a.txt' })).content).toBe('     1\tother')
  })
})
