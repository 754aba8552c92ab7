import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import * as session from '@goalkeeper/session'
import { testDatabase } from '@goalkeeper/test-kit'
import * as store from '../src/index.ts'
import { KEY } from './helpers.ts'

const db = testDatabase()

describe('the store plugin', () => {
  it('keeps the pool open through a whole-app shutdown until the session service has written its last records', async () => {
    const root = new Context()
    const errors: string[] = []
    root.logger.exporter({ levels: { default: 1 }, export: (m) => void (m.type === 'error' && errors.push(String(m.args[0]))) })
    // Both plugins in one fiber: disposing it stops them together, in no set order, as a whole-app shutdown does.
    let app!: Context
    const fiber = await root.plugin({ name: 'app', apply: (ctx: Context) => { app = ctx } })
    await app.plugin(store, { url: db.url })
    await app.plugin(session, { key: KEY, flushDelayMs: 3_600_000 })
    const made = await root.sessions.create({ cwd: '/work' })
    for (let i = 0; i < 50; i++) made.append('note', { i })
    await fiber.dispose()

    const { rows } = await db.query('SELECT count(*)::int AS n FROM goalkeeper_session_records WHERE session_id = $1', [made.id])
    expect(rows[0].n).toBe(51)
    expect(errors).toEqual([])
  })
})
