import { Context, type Fiber } from 'cordis'
import { afterEach } from 'vitest'
import type { SessionService } from '@goalkeeper/session'
import { sessionStack, type SessionStackConfig } from '@goalkeeper/test-kit'

/** The log format the tests run on: 2, or 1 for the files of `v1/` (set by `v1/use-v1.ts` before they import a suite). */
export const LOG_VERSION: 1 | 2 = (globalThis as { GOALKEEPER_TEST_LOG_VERSION?: 1 | 2 }).GOALKEEPER_TEST_LOG_VERSION ?? 2
/** The tests run on logs signed per batch: tampering is located to the batch. */
export const BATCHED = LOG_VERSION === 2

/** The shared signing key of these tests (as GOALKEEPER_SESSION_KEY would give it), never a user's. */
export const KEY = 'a1'.repeat(32)

export interface App {
  root: Context
  fiber: Fiber
  sessions: SessionService
  errors: string[]
}

/** A session plugin on `database`, disposed after the test. */
export function appsPerTest(): (database: string, config?: SessionStackConfig) => Promise<App> {
  let apps: App[] = []
  afterEach(async () => {
    for (const app of apps.reverse()) await app.fiber.dispose()
    apps = []
  })
  return async (database, config = {}) => {
    const root = new Context()
    const errors: string[] = []
    root.logger.exporter({ levels: { default: 3 }, export: (m) => void (m.type === 'error' && errors.push(String(m.args[0]))) })
    const fiber = await root.plugin(sessionStack, { database, key: KEY, logVersion: LOG_VERSION, ...config })
    const app = { root, fiber, sessions: root.sessions, errors }
    apps.push(app)
    return app
  }
}
