import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { Context } from 'cordis'
import { afterAll, describe, expect, it } from 'vitest'
import { sessionStack, type SessionStackConfig, testDatabase } from '@goalkeeper/test-kit'
import { KEY } from './helpers.ts'

const db = testDatabase()
const dirs: string[] = []
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))))

/** Starts the session plugin and returns why it failed (or its context when it did not). */
async function startPlugin(config: SessionStackConfig) {
  const root = new Context()
  root.logger.exporter({ levels: { default: 0 }, export: () => {} })
  const fiber = root.plugin(sessionStack, config)
  const error = await fiber.await().then(() => undefined, (e: Error) => e)
  return { root, error, dispose: () => fiber.dispose() }
}

describe('the session plugin on a database', () => {
  it('refuses to start without a shared key, saying how to give one', async () => {
    const { error } = await startPlugin({ database: db.url })
    expect(error).toMatchObject({ code: 'SESSION_KEY_MISSING', message: expect.stringContaining('set key: ${GOALKEEPER_SESSION_KEY} in the session entry and GOALKEEPER_SESSION_KEY to the same 64 hex digits (openssl rand -hex 32) on every machine') })
  })

  it('refuses a key that is not 64 hex digits without quoting it', async () => {
    const { error } = await startPlugin({ database: db.url, key: 'not-a-key-but-a-secret-value' })
    expect(error).toMatchObject({ code: 'SESSION_KEY_INVALID' })
    expect(error!.message).not.toContain('not-a-key-but-a-secret-value')
  })

  it('with files, key replaces the key file: what one machine signs, another with the same key verifies', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'gk-'))
    dirs.push(dir)
    const a = await startPlugin({ dir, key: KEY })
    const made = await a.root.sessions.create({ cwd: dir })
    made.append('test/item', {})
    await a.root.sessions.close(made)
    await a.dispose()
    const b = await startPlugin({ dir, key: KEY.toUpperCase() })
    expect((await b.root.sessions.open(made.id, { readOnly: true })).integrity).toMatchObject({ state: 'signed', lines: 2 })
    await b.dispose()
    const other = await startPlugin({ dir, key: 'f6'.repeat(32) })
    await expect(other.root.sessions.open(made.id)).rejects.toMatchObject({ code: 'SESSION_TAMPERED', line: 1 })
    await other.dispose()
  })
})
