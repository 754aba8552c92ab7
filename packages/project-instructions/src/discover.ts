import fs from 'node:fs'
import path from 'node:path'

/** One instructions file that applies to a workspace, and where it sits. */
export interface InstructionsFile {
  path: string
  /** `user` (the user-level file), `repository` (an ancestor up to the repository root) or `workspace` (the root itself). */
  scope: 'user' | 'repository' | 'workspace'
}

/**
 * The instructions files for a workspace, most general first: the user's, then the repository root's
 * down to the workspace root's (the nearest last, so it has the last word). Ancestors are read only up
 * to the repository root (the nearest directory with `.git`); outside a repository only the workspace's
 * own file applies, so a stray file in a home or temp directory does not leak into every workspace.
 */
export function discoverFiles(cwd: string, fileName: string, userDir: string | undefined): InstructionsFile[] {
  const root = path.resolve(cwd)
  const chain = [root]
  const repository = repositoryRoot(root)
  if (repository) for (let dir = root; dir !== repository;) chain.unshift(dir = path.dirname(dir))
  const files: InstructionsFile[] = []
  if (userDir) files.push({ path: path.join(userDir, fileName), scope: 'user' })
  for (const dir of chain) files.push({ path: path.join(dir, fileName), scope: dir === root ? 'workspace' : 'repository' })
  // The user directory may itself lie in the chain (a workspace inside ~/.config/goalkeeper).
  const seen = new Set<string>()
  return files.filter((file) => !seen.has(file.path) && seen.add(file.path) && isFile(file.path))
}

function repositoryRoot(from: string): string | undefined {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, '.git'))) return dir
    if (path.dirname(dir) === dir) return undefined
  }
}

const isFile = (file: string) => fs.statSync(file, { throwIfNoEntry: false })?.isFile() ?? false
