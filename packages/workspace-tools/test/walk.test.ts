import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { descriptorPaths } from '../src/proc-fd.ts'
import { Dir, openDirectory, openParent } from '../src/walk.ts'

let dir: string
let root: string
let outside: string
beforeEach(async () => {
  dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'gk-walk-')))
  root = path.join(dir, 'root')
  outside = path.join(dir, 'outside')
  await fs.mkdir(path.join(root, 'd'), { recursive: true })
  await fs.mkdir(outside)
  await fs.writeFile(path.join(root, 'd', 'a.txt'), 'inside')
  await fs.writeFile(path.join(outside, 'a.txt'), 'outside')
})
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true })
})

const target = (relative: string) => ({ real: path.join(root, relative), shown: relative, root })

describe('descriptor paths (Linux, where the tests run)', () => {
  it('are detected', () => {
    expect(descriptorPaths()).toBe(true)
  })

  it('keep naming the directory that was opened after its path is swapped for a link', async () => {
    const d = await openDirectory(target('d'), 'not a directory')
    try {
      expect(d.self).toMatch(/^\/proc\/self\/fd\/\d+$/)
      await fs.rename(path.join(root, 'd'), path.join(root, 'd-aside'))
      await fs.symlink(outside, path.join(root, 'd'))
      expect(await fs.readFile(d.at('a.txt'), 'utf8')).toBe('inside')
      expect(await fs.readdir(d.self)).toEqual(['a.txt'])
      await fs.writeFile(d.at('b.txt'), 'new')
      expect((await fs.readdir(outside)).sort()).toEqual(['a.txt'])
      expect(await fs.readFile(path.join(root, 'd-aside', 'b.txt'), 'utf8')).toBe('new')
    } finally {
      await d.close()
    }
  })
})

describe('the walk', () => {
  it('refuses a link on the way, and never takes "." or ".." as a step', async () => {
    await fs.symlink(outside, path.join(root, 'link'))
    await expect(openParent(target('link/a.txt'))).rejects.toMatchObject({ code: 'PATH_OUTSIDE_ROOT', message: expect.stringContaining('"link", on the way to "link/a.txt"') })
    const top = await Dir.root(root)
    try {
      for (const name of ['..', '.', '', 'd/a.txt']) await expect(top.enter(name, name)).rejects.toThrow('Unexpected path component')
    } finally {
      await top.close()
    }
  })

  it('creates missing directories on the way when asked, and names the entry in the last one', async () => {
    const { dir: parent, name } = await openParent(target('d/new/deeper/f.txt'), { create: true })
    try {
      expect(name).toBe('f.txt')
      expect(parent.real).toBe(path.join(root, 'd/new/deeper'))
      await fs.writeFile(parent.at(name), 'x')
    } finally {
      await parent.close()
    }
    expect(await fs.readFile(path.join(root, 'd/new/deeper/f.txt'), 'utf8')).toBe('x')
  })

  it('names the root itself as "."', async () => {
    const { dir: parent, name } = await openParent(target(''))
    try {
      expect(name).toBe('.')
      expect((await fs.stat(parent.at(name))).isDirectory()).toBe(true)
    } finally {
      await parent.close()
    }
  })
})
