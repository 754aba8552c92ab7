// Worker side of child-builds-setup.ts: which node arguments start a program the tests run as a child.
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { inject } from 'vitest'

const repoRoot = path.resolve(fileURLToPath(import.meta.url), '../../../..')

/**
 * The node arguments that run `entry` (a TypeScript file of the repository, absolute or relative to its root):
 * the run's bundle of it when there is one (see CHILD_ENTRIES), else the source through tsx, which children
 * resolve from their cwd (the repository). `GOALKEEPER_TEST_SOURCE=1` runs every child from source.
 */
export function nodeArgs(entry: string): string[] {
  const relative = path.isAbsolute(entry) ? path.relative(repoRoot, entry) : entry
  const bundle = process.env.GOALKEEPER_TEST_SOURCE ? undefined : inject('childBuilds')?.[relative]
  return bundle ? [bundle] : ['--import', 'tsx', path.join(repoRoot, relative)]
}
