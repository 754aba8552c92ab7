// The catalogue of session record types, events and services, read from their declarations: the
// `declare module 'cordis'` blocks (`Events`, `Context`) and `RecordData` with its registrations by
// declaration merging. It writes the tables of docs/DESIGN.md (`npm run catalogue`), and the catalogue
// test uses it to find code that listens to an event or appends a record type nobody declared.
//
// Syntax only (the TypeScript parser, no type checker): it reads every source file in well under a
// second, where a checked program of the workspace takes a minute.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import ts from 'typescript'

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
export const START = '<!-- catalogue:start -->'
export const END = '<!-- catalogue:end -->'
const SESSION_MODULE = '@goalkeeper/session'

export interface SourceText {
  /** Path relative to the repository root, with `/`. */
  file: string
  /** The package's short name (its directory): `agent-loop`, `mistake-limit`. */
  pkg: string
  text: string
}

export interface Entry {
  name: string
  /** Arguments of an event, data of a record, type of a service. */
  type: string
  /** What an event's listener returns. */
  returns?: string
  pkg: string
  file: string
  about: string
}

export interface Catalogue {
  records: Entry[]
  events: Entry[]
  services: Entry[]
  /** Cordis's own events (`internal/...`): listening to them is allowed, they are not listed. */
  builtinEvents: string[]
}

export type UseKind = 'listen' | 'dispatch' | 'append'

export interface Use {
  kind: UseKind
  file: string
  line: number
  /** The call as written, shortened: `ctx.on`, `dispatchIsolated`, `session.append`. */
  call: string
  /** The event names or record types the call can use; undefined when they cannot be read from the source. */
  names?: string[]
  /** The enclosing function or method, for naming a site that cannot be resolved. */
  within: string
}

/** The source files of packages/*\/src and plugins/*\/src. */
export function readSources(root = ROOT): SourceText[] {
  const sources: SourceText[] = []
  for (const group of ['packages', 'plugins']) {
    const dir = path.join(root, group)
    if (!fs.existsSync(dir)) continue
    for (const pkg of fs.readdirSync(dir).sort()) {
      const src = path.join(dir, pkg, 'src')
      if (!fs.existsSync(src)) continue
      for (const file of walk(src)) {
        sources.push({ file: path.relative(root, file).split(path.sep).join('/'), pkg, text: fs.readFileSync(file, 'utf8') })
      }
    }
  }
  return sources
}

function walk(dir: string): string[] {
  const files: string[] = []
  for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) files.push(...walk(full))
    else if (/\.(ts|mts|js|mjs)$/.test(entry.name)) files.push(full)
  }
  return files
}

const parse = (source: SourceText) => ts.createSourceFile(source.file, source.text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)

/** Reads the declarations of `sources`; `cordisEvents` is the text of Cordis's own events.d.ts. */
export function readCatalogue(sources: readonly SourceText[], cordisEvents = readCordisEvents()): Catalogue {
  const catalogue: Catalogue = { records: [], events: [], services: [], builtinEvents: [] }
  for (const source of sources) {
    const file = parse(source)
    const interfaces = new Map<string, ts.InterfaceDeclaration>()
    for (const statement of file.statements) if (ts.isInterfaceDeclaration(statement)) interfaces.set(statement.name.text, statement)
    const add = (list: Entry[], decl: ts.InterfaceDeclaration, seen = new Set<string>()) => {
      // `interface RecordData extends FleetRecordData {}`: the members come from an interface of the same file.
      for (const heritage of decl.heritageClauses ?? []) {
        for (const type of heritage.types) {
          const base = ts.isIdentifier(type.expression) ? interfaces.get(type.expression.text) : undefined
          if (base && !seen.has(base.name.text)) add(list, base, seen.add(base.name.text))
        }
      }
      for (const member of decl.members) {
        const entry = entryOf(member, source, file)
        if (entry) list.push(entry)
      }
    }
    for (const statement of file.statements) {
      if (ts.isModuleDeclaration(statement) && ts.isStringLiteral(statement.name) && statement.body && ts.isModuleBlock(statement.body)) {
        for (const inner of statement.body.statements) {
          if (!ts.isInterfaceDeclaration(inner)) continue
          const block = statement.name.text
          if (block === 'cordis' && inner.name.text === 'Events') add(catalogue.events, inner)
          if (block === 'cordis' && inner.name.text === 'Context') add(catalogue.services, inner)
          if (block === SESSION_MODULE && inner.name.text === 'RecordData') add(catalogue.records, inner)
        }
      }
      // The vocabulary itself, in the session package.
      if (source.pkg === 'session' && ts.isInterfaceDeclaration(statement) && statement.name.text === 'RecordData') add(catalogue.records, statement)
    }
  }
  const builtins = ts.createSourceFile('events.d.ts', cordisEvents, ts.ScriptTarget.Latest, true)
  builtins.forEachChild(function visit(node) {
    if (ts.isInterfaceDeclaration(node) && node.name.text === 'Events') {
      for (const member of node.members) if (member.name && ts.isStringLiteral(member.name)) catalogue.builtinEvents.push(member.name.text)
    } else node.forEachChild(visit)
  })
  return catalogue
}

export function readCordisEvents(root = ROOT): string {
  return fs.readFileSync(path.join(root, 'node_modules/cordis/lib/events.d.ts'), 'utf8')
}

const printer = ts.createPrinter({ removeComments: true, newLine: ts.NewLineKind.LineFeed })

/** Type text on one line, without comments and without `import('./x.ts').` qualifiers. */
function typeText(node: ts.Node, file: ts.SourceFile): string {
  return printer.printNode(ts.EmitHint.Unspecified, node, file)
    .replace(/import\((['"])[^'"]*\1\)\./g, '')
    .replace(/\s+/g, ' ')
    .replace(/;\s*}/g, ' }')
    .trim()
}

function entryOf(member: ts.TypeElement, source: SourceText, file: ts.SourceFile): Entry | undefined {
  if (!member.name || !(ts.isStringLiteral(member.name) || ts.isIdentifier(member.name))) return undefined
  const base = { name: member.name.text, pkg: source.pkg, file: source.file, about: aboutOf(member) }
  if (ts.isMethodSignature(member)) {
    const params = member.parameters.filter((param) => !(ts.isIdentifier(param.name) && param.name.text === 'this'))
    return { ...base, type: params.map((param) => typeText(param, file)).join(', '), returns: member.type ? typeText(member.type, file) : 'void' }
  }
  if (ts.isPropertySignature(member)) return { ...base, type: member.type ? typeText(member.type, file) : 'unknown' }
  return undefined
}

/** The first sentence of a member's doc comment. */
function aboutOf(member: ts.Node): string {
  const docs = (member as { jsDoc?: ts.JSDoc[] }).jsDoc
  const comment = docs?.at(-1)?.comment
  const text = (typeof comment === 'string' ? comment : comment?.map((part) => part.text).join('') ?? '')
    .replace(/\s+/g, ' ').trim().replace(/^Extension: /, '')
  const end = text.search(/\.(\s|$)/)
  const sentence = end < 0 ? text : text.slice(0, end)
  return sentence.charAt(0).toUpperCase() + sentence.slice(1)
}

const LISTEN = new Set(['on', 'once'])
const DISPATCH = new Set(['emit', 'parallel', 'serial', 'bail', 'waterfall'])
/** Names a Cordis context goes by in this code base; other receivers (`process`, a child, a stream, an emitter) are not the bus. */
const CONTEXT = /^(ctx|root|context)$/
const SESSION = /session$/i

/** Every place in `sources` that listens to or dispatches an event, or appends a record. */
export function findUses(sources: readonly SourceText[]): Use[] {
  const uses: Use[] = []
  const exported = exportedConstants(sources)
  for (const source of sources) {
    const file = parse(source)
    const visit = (node: ts.Node) => {
      if (ts.isCallExpression(node)) {
        const use = useOf(node, source, file, exported)
        if (use) uses.push(use)
      }
      node.forEachChild(visit)
    }
    visit(file)
  }
  return uses
}

function useOf(call: ts.CallExpression, source: SourceText, file: ts.SourceFile, exported: Map<string, string[]>): Use | undefined {
  const callee = unwrap(call.expression)
  let kind: UseKind | undefined
  let arg: ts.Expression | undefined
  let text = ''
  if (ts.isIdentifier(callee) && callee.text === 'dispatchIsolated') {
    kind = 'dispatch'
    arg = call.arguments[1]
    text = 'dispatchIsolated'
  } else if (ts.isPropertyAccessExpression(callee)) {
    const method = callee.name.text
    const receiver = lastName(callee.expression)
    if (receiver && CONTEXT.test(receiver) && (LISTEN.has(method) || DISPATCH.has(method))) kind = LISTEN.has(method) ? 'listen' : 'dispatch'
    else if (receiver && SESSION.test(receiver) && method === 'append') kind = 'append'
    arg = call.arguments[0]
    text = `${receiver}.${method}`
  }
  if (!kind || !arg) return undefined
  const line = file.getLineAndCharacterOfPosition(call.getStart(file)).line + 1
  return { kind, file: source.file, line, call: text, names: resolve(arg, file, exported), within: enclosing(call) }
}

/** `x`, `(x)`, `x!`, `x as T`, `x satisfies T` are all `x`. */
function unwrap(node: ts.Expression): ts.Expression {
  while (ts.isParenthesizedExpression(node) || ts.isNonNullExpression(node) || ts.isAsExpression(node) || ts.isSatisfiesExpression(node) || ts.isTypeAssertionExpression(node)) node = node.expression
  return node
}

/** `ctx` of `ctx`, `this.ctx`, `this.host.ctx`, `(ctx as any)`. */
function lastName(node: ts.Expression): string | undefined {
  const inner = unwrap(node)
  if (ts.isIdentifier(inner)) return inner.text
  if (ts.isPropertyAccessExpression(inner)) return inner.name.text
  return undefined
}

function enclosing(node: ts.Node): string {
  for (let at: ts.Node | undefined = node.parent; at; at = at.parent) {
    if ((ts.isFunctionDeclaration(at) || ts.isMethodDeclaration(at)) && at.name) return at.name.getText()
    if (ts.isVariableDeclaration(at) && ts.isIdentifier(at.name)) return at.name.text
    if (ts.isPropertyAssignment(at) && ts.isIdentifier(at.name)) return at.name.text
  }
  return '(module)'
}

/** The string values a name argument can take, read from literals, consts and `for (const x of [...])`. */
function resolve(node: ts.Expression, file: ts.SourceFile, exported: Map<string, string[]>): string[] | undefined {
  const inner = unwrap(node)
  if (ts.isStringLiteral(inner) || ts.isNoSubstitutionTemplateLiteral(inner)) return [inner.text]
  if (ts.isConditionalExpression(inner)) {
    const a = resolve(inner.whenTrue, file, exported)
    const b = resolve(inner.whenFalse, file, exported)
    return a && b ? [...a, ...b] : undefined
  }
  if (!ts.isIdentifier(inner)) return undefined
  const bound = binding(inner, file)
  if (bound?.kind === 'const') return resolve(bound.init, file, exported)
  if (bound?.kind === 'of') {
    const list = arrayOf(bound.init, file)
    if (!list) return undefined
    const values = list.map((element) => resolve(element, file, exported))
    return values.every(Boolean) ? values.flat() as string[] : undefined
  }
  if (bound?.kind === 'other') return undefined
  // An imported constant: `GOAL_CHANGE_RECORD` from the goal package.
  return exported.get(inner.text)
}

type Binding = { kind: 'const'; init: ts.Expression } | { kind: 'of'; init: ts.Expression } | { kind: 'other' }

/** Where `name` is bound, looking outwards from its use; undefined when it is not bound in this file (an import). */
function binding(name: ts.Identifier, file: ts.SourceFile): Binding | undefined {
  for (let at: ts.Node | undefined = name.parent; at; at = at.parent) {
    if (ts.isForOfStatement(at) && ts.isVariableDeclarationList(at.initializer) && declares(at.initializer, name.text)) return { kind: 'of', init: at.expression }
    if ((ts.isFunctionLike(at)) && at.parameters.some((param) => bindsName(param.name, name.text))) return { kind: 'other' }
    const statements = ts.isBlock(at) || ts.isSourceFile(at) || ts.isModuleBlock(at) ? at.statements : undefined
    for (const statement of statements ?? []) {
      if (!ts.isVariableStatement(statement)) continue
      for (const decl of statement.declarationList.declarations) {
        if (!bindsName(decl.name, name.text)) continue
        const constant = (statement.declarationList.flags & ts.NodeFlags.Const) !== 0
        return constant && ts.isIdentifier(decl.name) && decl.initializer ? { kind: 'const', init: decl.initializer } : { kind: 'other' }
      }
    }
  }
  void file
  return undefined
}

const declares = (list: ts.VariableDeclarationList, name: string) => list.declarations.some((decl) => bindsName(decl.name, name))

function bindsName(pattern: ts.BindingName, name: string): boolean {
  if (ts.isIdentifier(pattern)) return pattern.text === name
  return pattern.elements.some((element) => !ts.isOmittedExpression(element) && bindsName(element.name, name))
}

function arrayOf(node: ts.Expression, file: ts.SourceFile): readonly ts.Expression[] | undefined {
  const inner = unwrap(node)
  if (ts.isArrayLiteralExpression(inner)) return inner.elements
  if (ts.isIdentifier(inner)) {
    const bound = binding(inner, file)
    if (bound?.kind === 'const') return arrayOf(bound.init, file)
  }
  return undefined
}

/** Top-level `export const NAME = 'text'` of every source, by name (a name two files give different values is left out). */
function exportedConstants(sources: readonly SourceText[]): Map<string, string[]> {
  const found = new Map<string, Set<string>>()
  for (const source of sources) {
    for (const statement of parse(source).statements) {
      if (!ts.isVariableStatement(statement) || !(statement.declarationList.flags & ts.NodeFlags.Const)) continue
      if (!statement.modifiers?.some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword)) continue
      for (const decl of statement.declarationList.declarations) {
        const init = decl.initializer && unwrap(decl.initializer)
        if (ts.isIdentifier(decl.name) && init && ts.isStringLiteral(init)) {
          const values = found.get(decl.name.text) ?? new Set<string>()
          found.set(decl.name.text, values.add(init.text))
        }
      }
    }
  }
  return new Map([...found].filter(([, values]) => values.size === 1).map(([name, values]) => [name, [...values]]))
}

/** A site whose names cannot be read from the source, allowed with the reason the compiler still checks it. */
export interface Unresolved { file: string; within: string; kind: UseKind; why: string }

/** What is wrong: undeclared events, unregistered record types, unresolved sites not allowed, allowances that match nothing. */
export function problems(catalogue: Catalogue, uses: readonly Use[], allowed: readonly Unresolved[] = []): string[] {
  const events = new Set([...catalogue.events.map((entry) => entry.name), ...catalogue.builtinEvents])
  const records = new Set(catalogue.records.map((entry) => entry.name))
  const found: string[] = []
  const used = new Set<Unresolved>()
  for (const use of uses) {
    const at = `${use.file}:${use.line} ${use.call}`
    if (!use.names) {
      const allowance = allowed.find((entry) => entry.file === use.file && entry.within === use.within && entry.kind === use.kind)
      if (allowance) used.add(allowance)
      else found.push(`${at}: the ${use.kind === 'append' ? 'record type' : 'event name'} cannot be read from the source (in ${use.within}); use a literal or a const`)
      continue
    }
    for (const name of use.names) {
      if (use.kind === 'append' && !records.has(name)) found.push(`${at}: appends '${name}', a record type no RecordData declaration registers`)
      if (use.kind !== 'append' && !events.has(name)) found.push(`${at}: ${use.kind === 'listen' ? 'listens to' : 'dispatches'} '${name}', an event no \`declare module 'cordis'\` Events block declares`)
    }
  }
  for (const entry of allowed) if (!used.has(entry)) found.push(`allowed unresolved site ${entry.file} (${entry.within}, ${entry.kind}) no longer exists: remove it from the allowance`)
  const twice = (list: Entry[], what: string) => {
    const seen = new Map<string, Entry>()
    for (const entry of list) {
      const before = seen.get(entry.name)
      if (before && before.file !== entry.file) found.push(`${what} '${entry.name}' is declared twice: ${before.file} and ${entry.file}`)
      seen.set(entry.name, entry)
    }
  }
  twice(catalogue.records, 'record type')
  twice(catalogue.events, 'event')
  twice(catalogue.services, 'service')
  return found
}

const cell = (text: string) => text.replace(/\|/g, '\\|')
const code = (text: string) => (text ? `\`${cell(text)}\`` : '')
const byPackage = (list: Entry[]) => [...list].sort((a, b) => a.pkg.localeCompare(b.pkg) || list.indexOf(a) - list.indexOf(b))

/** The tables written between the markers of docs/DESIGN.md. */
export function renderTables(catalogue: Catalogue): string {
  const lines = [
    '<!-- Generated from the declarations by `npm run catalogue` (scripts/catalogue.ts); edit the declarations, not this table. -->',
    '',
    '**Record types** (`RecordData` of `@goalkeeper/session`, extended by each owner with `declare module \'@goalkeeper/session\'`):',
    '',
    '| type | data | package | about |',
    '|---|---|---|---|',
    ...byPackage(catalogue.records).map((entry) => `| ${code(entry.name)} | ${code(entry.type)} | ${entry.pkg} | ${cell(entry.about)} |`),
    '',
    '**Events** (`declare module \'cordis\' { interface Events }`):',
    '',
    '| event | listener returns | package | about |',
    '|---|---|---|---|',
    ...byPackage(catalogue.events).map((entry) => `| ${code(`${entry.name} (${entry.type})`)} | ${code(entry.returns ?? 'void')} | ${entry.pkg} | ${cell(entry.about)} |`),
    '',
    '**Services** (`declare module \'cordis\' { interface Context }`):',
    '',
    '| service | type | package | about |',
    '|---|---|---|---|',
    ...byPackage(catalogue.services).map((entry) => `| ${code(`ctx.${entry.name}`)} | ${code(entry.type)} | ${entry.pkg} | ${cell(entry.about)} |`),
  ]
  return lines.join('\n')
}

/** `design` with the tables between the markers replaced by `tables`. */
export function withTables(design: string, tables: string): string {
  const start = design.indexOf(START)
  const end = design.indexOf(END)
  if (start < 0 || end < start) throw new Error(`docs/DESIGN.md has no ${START} ... ${END} markers`)
  return `${design.slice(0, start + START.length)}\n${tables}\n${design.slice(end)}`
}

export const designFile = (root = ROOT) => path.join(root, 'docs/DESIGN.md')

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const sources = readSources()
  const catalogue = readCatalogue(sources)
  const file = designFile()
  const before = fs.readFileSync(file, 'utf8')
  const after = withTables(before, renderTables(catalogue))
  if (after !== before) fs.writeFileSync(file, after)
  console.log(`${path.relative(process.cwd(), file)}: ${catalogue.records.length} record types, ${catalogue.events.length} events, ${catalogue.services.length} services${after === before ? ' (unchanged)' : ' (written)'}`)
}
