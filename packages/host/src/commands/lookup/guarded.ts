import { existsSync, realpathSync } from 'node:fs'
import path from 'node:path'
import type { App } from '../../app.ts'

const real = (place: string) => {
  try {
    return realpathSync(place)
  } catch {
    return path.resolve(place)
  }
}
const inside = (child: string, parent: string) => {
  const relative = path.relative(parent, child)
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative))
}

/**
 * What `check` warns about: the session signing key or session logs inside the workspace. Tools refuse
 * them and the sandbox hides the key and keeps the logs read-only, but in the `full` mode a command runs
 * with the user's rights, and whoever reads the key can sign a person's input into any session.
 */
export function guardedInWorkspace(app: App, workspace: string): string[] {
  const guarded = app.ctx.get('sessions')?.protectedPaths
  if (!guarded) return []
  const root = real(workspace)
  const warnings: string[] = []
  for (const file of guarded.keyFiles) {
    if (inside(real(file), root)) warnings.push(`the workspace ${root} contains goalkeeper's session signing key (${file}): tools refuse it and sandboxed commands cannot see it, but a command in the full mode can read it and sign a person's input into any session; work in a directory that does not contain it`)
  }
  for (const dir of guarded.stores) {
    if (existsSync(dir) && inside(real(dir), root)) warnings.push(`the workspace ${root} contains session logs (${dir}): tools cannot change them and sandboxed commands see them read-only, but a command in the full mode can`)
  }
  return warnings
}
