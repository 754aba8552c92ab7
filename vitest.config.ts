import { availableParallelism } from 'node:os'
import { configDefaults, defineConfig } from 'vitest/config'

// CI asks setup.mjs to install afresh before the run (.ci/run); tests that run npm scripts calling setup.mjs
// (the README's build, the plugin authors' packs) must not reinstall node_modules under the running suite.
delete process.env.GOALKEEPER_FORCE_INSTALL

const ALL = ['packages/*/test/**/*.test.ts', 'plugins/*/test/**/*.test.ts', 'tests/**/*.test.ts']

// Test files that keep nothing of their own at module level and restore what they change of the process
// (env, cwd, timers): they share a worker's loaded modules instead of loading cordis and the packages afresh
// for each file, which was about a second of CPU a file on two cores. A file that sets a global before it
// imports a suite (the `v1/` and `postgres/` wrappers of session and session-jsonl) must stay isolated; so
// must one whose helpers read such a global once at load. A directory is added here only after its files
// passed with `--no-isolate`.
const SHARED_MODULES = [
  'plugins/loop-guard', 'plugins/mistake-limit', 'plugins/no-progress',
  'packages/policy', 'packages/kit', 'packages/hooks', 'packages/model-openai', 'packages/permissions', 'packages/mcp',
  'packages/goal-auto-resume', 'packages/sandbox', 'packages/project-instructions', 'packages/control',
  'packages/agent-loop',
].map((dir) => `${dir}/test/**/*.test.ts`)

// Options of both projects; a project does not take the root's test options unless it extends the root, and
// one that did would also take (and run again) the root's globalSetup, whose values every project gets anyway.
const common = {
  pool: 'forks',
  // Guards against a hang, not speed checks, sized for a 2-core machine at a load of 25, where a test runs
  // several times slower than on a quiet one. Slower tests set their own (CLI_TIMEOUT, the race tests').
  testTimeout: 60_000,
  hookTimeout: 60_000,
} as const

export default defineConfig({
  test: {
    include: ALL,
    // One PostgreSQL server per run (DATABASE_URL, or an embedded one) and one bundle of each program the tests
    // start as a child process: packages/test-kit/src/global-setup.ts. Run once, by the root project.
    globalSetup: ['packages/test-kit/src/global-setup.ts'],
    // vitest's default is one worker less than the cores: one on a 2-core machine. Most of a CLI or race
    // test's time is spent in its child processes, so a second file overlaps it. VITEST_MAX_WORKERS overrides.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    projects: [
      { test: { ...common, name: 'isolated', include: ALL, exclude: [...configDefaults.exclude, ...SHARED_MODULES] } },
      { test: { ...common, name: 'shared', include: SHARED_MODULES, isolate: false } },
    ],
  },
})
