import { availableParallelism } from 'node:os'
import { defineConfig } from 'vitest/config'

// CI asks setup.mjs to install afresh before the run (.ci/run); tests that run npm scripts calling setup.mjs
// (the README's build, the plugin authors' packs) must not reinstall node_modules under the running suite.
delete process.env.GOALKEEPER_FORCE_INSTALL

export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts', 'plugins/*/test/**/*.test.ts', 'tests/**/*.test.ts'],
    // One PostgreSQL server per run (DATABASE_URL, or an embedded one) and one bundle of each program the tests
    // start as a child process: packages/test-kit/src/global-setup.ts.
    globalSetup: ['packages/test-kit/src/global-setup.ts'],
    pool: 'forks',
    // vitest's default is one worker less than the cores: one on a 2-core machine. Most of a CLI or race
    // test's time is spent in its child processes, so a second file overlaps it. VITEST_MAX_WORKERS overrides.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // Guards against a hang, not speed checks, sized for a 2-core machine at a load of 25, where a test runs
    // several times slower than on a quiet one. Slower tests set their own (CLI_TIMEOUT, the race tests').
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
})
