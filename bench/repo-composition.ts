// The repository's own cordis.yml, loaded as the CLI loads it, for the benches that measure the default
// composition (history, runaway).
import { mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Context, type Exporter, Logger } from 'cordis'
import { builtinPlugins } from '@goalkeeper/host'
import { formatReport, Loader } from '@goalkeeper/loader'

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

export interface RepoComposition {
  root: Context
  /** The temp project: its cordis.yml, node_modules (a link) and sessions dir. */
  dir: string
  /** Every log line, `name: text`, in order. */
  errors: string[]
  /** Disposes every entry through the loader, then removes the project. */
  dispose(): Promise<void>
}

/**
 * Loads the repository's cordis.yml in a temp project (`prefix` names its dir) with its offline demo model
 * switched off: the bench scripts the model itself, and the demo model would block any goal but its own
 * (`demo-model-only`) before a round ran. The CLI's built-in plugins are the loader's builtins, so a session
 * entry brings its store as in the CLI. A bad entry throws the loader's report.
 */
export async function loadRepoComposition(prefix: string): Promise<RepoComposition> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix))
  const root = new Context()
  const errors: string[] = []
  const exporter: Exporter = { levels: { default: 0 }, export: (message) => errors.push(`${message.name}: ${Logger.format(exporter, message)}`) }
  root.logger.exporter(exporter)
  const original = await readFile(path.join(repoRoot, 'cordis.yml'), 'utf8')
  const composition = original.replace("name: ./demo/goal-script.mjs\n", "name: ./demo/goal-script.mjs\n  disabled: true\n")
  if (composition === original) throw new Error('cordis.yml no longer has the demo-script entry this bench switches off')
  await writeFile(path.join(dir, 'cordis.yml'), composition)
  // Package names resolve from the file's directory, as in a project.
  await symlink(path.join(repoRoot, 'node_modules'), path.join(dir, 'node_modules'), 'dir')
  const loader = new Loader(root, {
    file: path.join(dir, 'cordis.yml'),
    env: { GOALKEEPER_SESSIONS_DIR: path.join(dir, 'sessions'), GOALKEEPER_DEMO_DELAY_MS: '0' },
    builtins: builtinPlugins,
  })
  const dispose = async () => {
    try {
      await loader.dispose()
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  }
  try {
    const report = await loader.load()
    if (!report.ok) throw new Error(formatReport(report).join('\n'))
  } catch (error) {
    await dispose()
    throw error
  }
  return { root, dir, errors, dispose }
}
