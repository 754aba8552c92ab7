import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { appsPerTest, tempDir } from './helpers.ts'

const launch = appsPerTest()

describe('a store or key that is not what its setting says', () => {
  it('a sessions directory that is a symbolic link is refused, and nothing is written where it points', async () => {
    const dir = await tempDir()
    const target = path.join(dir, 'elsewhere')
    await fs.mkdir(target)
    const store = path.join(dir, 'sessions')
    await fs.symlink(target, store)
    const { sessions } = await launch(store)
    const refusal = { code: 'SESSION_CONFIG', message: `dir of the session plugin: ${store} is a symbolic link; sessions are never kept through a link (it could lead anywhere): give the real directory` }
    await expect(sessions.create({ cwd: dir })).rejects.toMatchObject(refusal)
    await expect(sessions.list()).rejects.toMatchObject(refusal)
    expect(await fs.readdir(target)).toEqual([])
  })

  it('a sessions directory that is a file is named with its setting', async () => {
    const dir = await tempDir()
    const store = path.join(dir, 'sessions')
    await fs.writeFile(store, 'not a directory')
    const { sessions } = await launch(store)
    await expect(sessions.create({ cwd: dir })).rejects.toMatchObject({ code: 'SESSION_CONFIG', message: `dir of the session plugin: ${store} is a file, not a directory` })
    const below = await launch(path.join(store, 'below'))
    await expect(below.sessions.create({ cwd: dir })).rejects.toMatchObject({ code: 'SESSION_CONFIG', message: expect.stringContaining('dir of the session plugin: ') })
  })

  it('a keyFile that is a directory or holds something else than a key is named with its setting', async () => {
    const dir = await tempDir()
    const keyDir = path.join(dir, 'key')
    await fs.mkdir(keyDir)
    const asDir = await launch(path.join(dir, 'a'), { keyFile: keyDir })
    await expect(asDir.sessions.create({ cwd: dir })).rejects.toMatchObject({ code: 'SESSION_KEY_INVALID', message: `keyFile of the session plugin: ${keyDir} is a directory, not a key file` })
    const garbage = path.join(dir, 'garbage.key')
    await fs.writeFile(garbage, 'hello\n', { mode: 0o600 })
    const asGarbage = await launch(path.join(dir, 'b'), { keyFile: garbage })
    await expect(asGarbage.sessions.create({ cwd: dir })).rejects.toMatchObject({ code: 'SESSION_KEY_INVALID', message: expect.stringContaining(`keyFile of the session plugin: ${garbage} is not a goalkeeper session key`) })
    // Nothing was made without a key.
    await expect(fs.readdir(path.join(dir, 'a'))).rejects.toMatchObject({ code: 'ENOENT' })
  })
})
