import { realpathSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

// Set by scripts/build.mjs in the bundled CLI; absent when the CLI runs from source.
declare const __GOALKEEPER_BUILD__: { version: string } | undefined

/** The build the CLI runs from, or undefined when it runs from the TypeScript sources. */
export const build = typeof __GOALKEEPER_BUILD__ === 'object' ? __GOALKEEPER_BUILD__ : undefined

/**
 * Where goalkeeper's own files are (its default cordis.yml, the demo): the installed package's directory
 * (the bin's real path, as npm links it) or the repository root.
 */
export function programDir(): string {
  if (build && process.argv[1]) return path.dirname(realpathSync(process.argv[1]))
  return fileURLToPath(new URL('../../..', import.meta.url))
}

/** The composition goalkeeper comes with, used where no cordis.yml is found. */
export function defaultComposition(): string {
  return path.join(programDir(), 'cordis.yml')
}

/**
 * A documentation file of goalkeeper by its path in the repository (`packages/acp/README.md`), where this
 * CLI finds it: the installed package carries the READMEs its help points to at the same paths.
 */
export function docFile(relative: string): string {
  return path.join(programDir(), relative)
}
