// The package rules of CONTRIBUTING.md, read from the import statements themselves. Generic on purpose:
// the packages are whatever packages/* and plugins/* hold, each one's rules come from its package.json.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import ts from 'typescript'

const SCOPE = '@goalkeeper/'
/** What a plugin under plugins/ may import at run time; everything else only with `import type`. */
export const PLUGIN_RUNTIME = ['@goalkeeper/kit', '@goalkeeper/policy']

export interface PackageInfo {
  name: string
  dir: string
  /** Whether it sits under plugins/ (third-party style). */
  plugin: boolean
  dependencies: Set<string>
  devDependencies: Set<string>
  /** Subpaths the package exports, `.` for the root. */
  exports: Set<string>
}

export interface ImportSite {
  specifier: string
  /** `static` (import/export from), `dynamic` (`import()`), `type-position` (`import('x').T` in a type). */
  form: 'static' | 'dynamic' | 'type-position'
  typeOnly: boolean
  line: number
}

export interface Violation {
  package: string
  /** Repository-relative, forward slashes. */
  file: string
  line: number
  specifier: string
  rule: 'undeclared' | 'deep-import' | 'plugin-runtime'
  detail: string
}

export function readPackages(root: string): PackageInfo[] {
  const packages: PackageInfo[] = []
  for (const group of ['packages', 'plugins']) {
    const base = join(root, group)
    if (!existsSync(base)) continue
    for (const entry of readdirSync(base).sort()) {
      const manifest = join(base, entry, 'package.json')
      if (!existsSync(manifest)) continue
      const json = JSON.parse(readFileSync(manifest, 'utf8'))
      packages.push({
        name: json.name,
        dir: join(base, entry),
        plugin: group === 'plugins',
        dependencies: new Set([...Object.keys(json.dependencies ?? {}), ...Object.keys(json.peerDependencies ?? {})]),
        devDependencies: new Set(Object.keys(json.devDependencies ?? {})),
        exports: new Set(typeof json.exports === 'object' && json.exports ? Object.keys(json.exports) : ['.']),
      })
    }
  }
  return packages
}

/** Every import of a module in one source text, with whether it brings a runtime value. */
export function importsOf(fileName: string, text: string): ImportSite[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true)
  const sites: ImportSite[] = []
  const line = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      sites.push({ specifier: node.moduleSpecifier.text, form: 'static', typeOnly: importIsTypeOnly(node), line: line(node) })
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const typeOnly = node.isTypeOnly
        || (!!node.exportClause && ts.isNamedExports(node.exportClause) && node.exportClause.elements.length > 0
          && node.exportClause.elements.every((e) => e.isTypeOnly))
      sites.push({ specifier: node.moduleSpecifier.text, form: 'static', typeOnly, line: line(node) })
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments
      if (arg && ts.isStringLiteralLike(arg)) sites.push({ specifier: arg.text, form: 'dynamic', typeOnly: false, line: line(node) })
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      sites.push({ specifier: node.argument.literal.text, form: 'type-position', typeOnly: true, line: line(node) })
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return sites
}

function importIsTypeOnly(node: ts.ImportDeclaration): boolean {
  const clause = node.importClause
  if (!clause) return false // `import 'x'` runs x
  if (clause.isTypeOnly) return true
  if (clause.name) return false
  const bindings = clause.namedBindings
  // `import { type A, type B } from 'x'` is erased whole under isolatedModules' rules
  return !!bindings && ts.isNamedImports(bindings) && bindings.elements.length > 0 && bindings.elements.every((e) => e.isTypeOnly)
}

/** The package a bare `@goalkeeper/...` specifier names, and the subpath after it (`.` for none). */
export function splitSpecifier(specifier: string): { name: string; subpath: string } | undefined {
  if (!specifier.startsWith(SCOPE)) return undefined
  const [scope, name, ...rest] = specifier.split('/')
  return { name: `${scope}/${name}`, subpath: rest.length ? `./${rest.join('/')}` : '.' }
}

/**
 * The rules for one import in one file of `pkg`. `kind` says whether the file is shipped code (`src`) or a
 * test; `file` is absolute so a relative specifier can be resolved against the package directory.
 */
export function checkImport(
  pkg: PackageInfo,
  byName: Map<string, PackageInfo>,
  kind: 'src' | 'test',
  file: string,
  site: ImportSite,
): Omit<Violation, 'package' | 'file' | 'line' | 'specifier'>[] {
  const found: Omit<Violation, 'package' | 'file' | 'line' | 'specifier'>[] = []
  if (site.specifier.startsWith('.')) {
    const target = resolve(dirname(file), site.specifier)
    if (!isInside(pkg.dir, target)) {
      const owner = [...byName.values()].find((p) => isInside(p.dir, target))
      found.push({ rule: 'deep-import', detail: `relative path out of ${pkg.name}${owner ? ` into ${owner.name}` : ''}` })
    }
    return found
  }
  const split = splitSpecifier(site.specifier)
  if (!split || split.name === pkg.name) return found
  const target = byName.get(split.name)
  if (split.subpath !== '.' && !target?.exports.has(split.subpath)) {
    found.push({ rule: 'deep-import', detail: `${split.subpath} is not exported by ${split.name}` })
  }
  const declared = pkg.dependencies.has(split.name) || (kind === 'test' && pkg.devDependencies.has(split.name))
  if (!declared) {
    const where = kind === 'src' ? 'dependencies' : 'dependencies or devDependencies'
    const how = site.form === 'dynamic' ? 'import()' : site.typeOnly ? 'type import' : 'import'
    found.push({ rule: 'undeclared', detail: `${how} of ${split.name}, not in ${where}` })
  }
  if (pkg.plugin && kind === 'src' && !site.typeOnly && !PLUGIN_RUNTIME.includes(split.name)) {
    found.push({ rule: 'plugin-runtime', detail: `a plugin takes ${split.name} at run time; only ${PLUGIN_RUNTIME.join(' and ')} may be` })
  }
  return found
}

function isInside(dir: string, path: string): boolean {
  const rel = relative(dir, path)
  return rel === '' || (!rel.startsWith('..') && !rel.startsWith(sep) && !/^[a-zA-Z]:/.test(rel))
}

function sourceFiles(dir: string): string[] {
  if (!existsSync(dir)) return []
  const files: string[] = []
  for (const entry of readdirSync(dir).sort()) {
    if (entry === 'node_modules' || entry.startsWith('.')) continue
    const path = join(dir, entry)
    if (statSync(path).isDirectory()) files.push(...sourceFiles(path))
    else if (/\.(m|c)?tsx?$/.test(entry) && !entry.endsWith('.d.ts')) files.push(path)
  }
  return files
}

/** Every violation in the repository at `root`. */
export function checkRepository(root: string): Violation[] {
  const packages = readPackages(root)
  const byName = new Map(packages.map((p) => [p.name, p]))
  const violations: Violation[] = []
  for (const pkg of packages) {
    for (const kind of ['src', 'test'] as const) {
      for (const file of sourceFiles(join(pkg.dir, kind))) {
        for (const site of importsOf(file, readFileSync(file, 'utf8'))) {
          for (const v of checkImport(pkg, byName, kind, file, site)) {
            violations.push({
              package: pkg.name,
              file: relative(root, file).split(sep).join('/'),
              line: site.line,
              specifier: site.specifier,
              ...v,
            })
          }
        }
      }
    }
  }
  return violations
}
