import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts', 'plugins/*/test/**/*.test.ts', 'tests/**/*.test.ts'],
    // One PostgreSQL server per run (DATABASE_URL, or an embedded one) and one bundle of each program the tests
    // start as a child process: packages/test-kit/src/global-setup.ts.
    globalSetup: ['packages/test-kit/src/global-setup.ts'],
    pool: 'forks',
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
})
