import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import type { Plugin } from 'cordis'
import { describeError } from '@goalkeeper/kit'

/** A plugin module could not be found or imported; `message` is meant to follow `name: `. */
export class ResolveError extends Error {}

export function isPathName(name: string): boolean {
  return name.startsWith('./') || name.startsWith('../') || path.isAbsolute(name)
}

/** Resolves an entry's `name` the way an import written in a file next to cordis.yml would. */
export function resolveModule(name: string, dir: string): string {
  if (isPathName(name)) {
    const file = path.resolve(dir, name)
    if (!existsSync(file)) throw new ResolveError(`file not found: ${file}`)
    return file
  }
  const require = createRequire(path.join(dir, 'cordis.yml'))
  try {
    return require.resolve(name)
  } catch (error) {
    // require.resolve uses the "require" export condition; an ESM-only package needs the "import" one.
    const esm = (error as NodeJS.ErrnoException).code === 'ERR_PACKAGE_PATH_NOT_EXPORTED' && resolveImportEntry(name, dir)
    if (esm) return esm
    throw new ResolveError(`cannot find package "${name}" from ${dir} (is it installed, and is the name right?)`)
  }
}

function resolveImportEntry(name: string, dir: string): string | undefined {
  for (let current = dir; ; current = path.dirname(current)) {
    const root = path.join(current, 'node_modules', name)
    if (existsSync(path.join(root, 'package.json'))) {
      const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'))
      const target = pickExport(manifest.exports) ?? manifest.module ?? manifest.main ?? 'index.js'
      return path.join(root, target)
    }
    if (path.dirname(current) === current) return undefined
  }
}

function pickExport(exports: unknown): string | undefined {
  if (typeof exports === 'string') return exports
  if (!exports || typeof exports !== 'object') return undefined
  const map = exports as Record<string, unknown>
  if ('.' in map) return pickExport(map['.'])
  for (const condition of ['import', 'node', 'default']) {
    const target = pickExport(map[condition])
    if (target) return target
  }
  return undefined
}

/**
 * Plugins that come with the program, by entry name: an installed CLI carries its default composition
 * inside itself, so those names must not depend on what is installed next to a cordis.yml.
 */
export type BuiltinPlugins = Readonly<Record<string, () => Promise<object>>>

/**
 * Imports the module and returns its plugin: the module itself when it exports `apply`, else its default
 * export. A name in `builtins` is taken from there, before any lookup on disk.
 */
export async function importPlugin(name: string, dir: string, builtins: BuiltinPlugins = {}): Promise<Plugin> {
  const builtin = Object.hasOwn(builtins, name) ? builtins[name] : undefined
  let module: Record<string, any>
  try {
    module = await (builtin ? builtin() : import(pathToFileURL(resolveModule(name, dir)).href))
  } catch (error) {
    if (error instanceof ResolveError) throw error
    throw new ResolveError(`cannot import "${name}": ${describeError(error)}`)
  }
  if (typeof module.apply === 'function') return module as Plugin
  const fallback = module.default
  if (typeof fallback === 'function' || typeof fallback?.apply === 'function') return fallback as Plugin
  throw new ResolveError(`"${name}" does not export a plugin (expected an \`apply\` export or a default export)`)
}
