import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts', 'plugins/*/test/**/*.test.ts', 'tests/**/*.test.ts'],
    // One PostgreSQL server per run: DATABASE_URL, or an embedded one (packages/test-kit/src/database-setup.ts).
    globalSetup: ['packages/test-kit/src/database-setup.ts'],
    pool: 'forks',
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
})
