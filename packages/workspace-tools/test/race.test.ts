import fs from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { setup, type Setup } from './helpers.ts'

/**
 * Runs after the tools' path check has resolved a path: the moment another process could swap a
 * checked file for a symbolic link. Installed through a mock of `realpath`, so the race is exact.
 */
const race = vi.hoisted(() => ({ target: '', swap: undefined as undefined | (() => Promise<void>) }))

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
  return { ...real, default: { ...real, realpath }, realpath }
})

let t: Setup
beforeEach(async () => {
  t = await setup()
})
afterEach(async () => {
  race.swap = undefined
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
