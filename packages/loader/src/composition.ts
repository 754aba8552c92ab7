import { parseDocument } from 'yaml'
import { describeValue } from './describe.ts'
import { type Env, interpolate, InterpolationError } from './env.ts'

/** One entry of cordis.yml after parsing and environment interpolation. Groups are flattened in file order. */
export interface EntrySpec {
  /** Matches the entry across reloads: the id, or a synthetic `#2.1` when the id is missing or already used. */
  key: string
  /** The id as written (the package name when omitted), shown in reports. */
  id: string
  kind: 'plugin' | 'group'
  /** Package name or `./relative/path` of the plugin module; a label for groups. */
  name?: string
  config?: unknown
  /** True when this entry or an enclosing group is disabled. */
  disabled: boolean
  /** Ids of the enclosing groups, outermost first. */
  groups: string[]
  /** How messages name the entry: `entry "agent"`, or `entry #3` when it has no usable id. */
  label: string
  /** Set when the entry itself is malformed: `field: problem`. Such an entry is never started. */
  error?: string
}

/** The file as a whole can not be used (YAML syntax, or the top level is not a list). */
export class CompositionError extends Error {
  override name = 'CompositionError'
}

const FIELDS = ['id', 'name', 'config', 'disabled', 'group']

export function parseComposition(text: string, env: Env): EntrySpec[] {
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true, merge: true })
  // yaml's pretty message is `what at line L, column C:` followed by an excerpt; keep the first line.
  if (doc.errors.length) throw new CompositionError(doc.errors[0].message.split('\n')[0].replace(/:$/, ''))
  let value: unknown
  try {
    // yaml refuses more than 100 alias expansions per node (an alias bomb); that is a bad file, not a crash.
    value = doc.toJS({ maxAliasCount: 100 })
  } catch (error) {
    throw new CompositionError(`the YAML cannot be expanded: ${(error as Error).message}`)
  }
  // An empty file starts nothing, which is never what was meant (a truncated or wrong file).
  if (value === null || value === undefined) throw new CompositionError('the file is empty: it lists no entries')
  if (!Array.isArray(value)) {
    throw new CompositionError(`expected a list of entries at the top level, got ${describeValue(value)}`)
  }
  const specs: EntrySpec[] = []
  walk(value, { env, specs, seen: new Map(), groups: [], position: '', disabled: false })
  return specs
}

interface Walk {
  env: Env
  specs: EntrySpec[]
  /** id -> position of the entry that first used it */
  seen: Map<string, string>
  groups: string[]
  position: string
  disabled: boolean
}

class EntryError extends Error {}

/**
 * Flattens the entries in file order (groups before their members). A loop over an explicit stack of
 * groups, not recursion: groups nested as deep as the YAML allows cannot overflow the call stack.
 */
function walk(top: unknown[], root: Walk): void {
  const stack = [{ items: top, next: 0, state: root }]
  while (stack.length) {
    const frame = stack[stack.length - 1]
    if (frame.next >= frame.items.length) {
      stack.pop()
      continue
    }
    const index = frame.next++
    const { state } = frame
    const position = state.position ? `${state.position}.${index + 1}` : `${index + 1}`
    const spec: EntrySpec = {
      key: `#${position}`,
      id: `#${position}`,
      kind: 'plugin',
      disabled: state.disabled,
      groups: state.groups,
      label: state.groups.length ? `entry #${index + 1} in group "${state.groups.at(-1)}"` : `entry #${position}`,
    }
    state.specs.push(spec)
    let children: unknown[] | undefined
    try {
      children = readEntry(frame.items[index], spec, state, position)
    } catch (error) {
      if (!(error instanceof EntryError || error instanceof InterpolationError)) throw error
      spec.error = error instanceof InterpolationError ? `${error.path}: ${error.message}` : error.message
      continue
    }
    if (children) stack.push({ items: children, next: 0, state: { ...state, groups: [...state.groups, spec.id], position, disabled: spec.disabled } })
  }
}

/** Fills `spec` from the raw entry; returns the children of a group. Throws EntryError on the first problem. */
function readEntry(item: unknown, spec: EntrySpec, state: Walk, position: string): unknown[] | undefined {
  if (!item || typeof item !== 'object' || Array.isArray(item)) {
    throw new EntryError(`expected a mapping with "id" and "name", got ${describeValue(item)}`)
  }
  const raw = item as Record<string, unknown>
  // The id comes first so that every later message can name the entry.
  if (raw.id !== undefined && raw.id !== null) claimId(raw.id, spec, state, position)
  const unknown = Object.keys(raw).find((key) => !FIELDS.includes(key))
  if (unknown !== undefined) throw new EntryError(`unknown field "${unknown}" (expected ${FIELDS.join(', ')})`)
  if (raw.group !== undefined && raw.group !== null && typeof raw.group !== 'boolean') {
    throw new EntryError(`group: expected true or false, got ${describeValue(raw.group)}`)
  }
  if (raw.group === true) spec.kind = 'group'

  const name = interpolate(raw.name ?? undefined, state.env, 'name')
  if (name !== undefined && (typeof name !== 'string' || !name.trim())) {
    throw new EntryError(`name: expected a package name or a ./relative path, got ${describeValue(name)}`)
  }
  spec.name = name as string | undefined
  if (raw.id === undefined || raw.id === null) {
    if (spec.kind === 'group') throw new EntryError('id: missing (a group needs an id)')
    if (spec.name === undefined) throw new EntryError('name: missing (the package name or a ./relative path of the plugin)')
    claimId(spec.name, spec, state, position)
  }

  const disabled = interpolate(raw.disabled ?? false, state.env, 'disabled')
  if (typeof disabled !== 'boolean') throw new EntryError(`disabled: expected true or false, got ${describeValue(disabled)}`)
  spec.disabled = state.disabled || disabled

  if (spec.kind === 'group') {
    const children = raw.config ?? []
    if (!Array.isArray(children)) {
      throw new EntryError(`config: a group's config must be a list of entries, got ${describeValue(children)}`)
    }
    return children
  }
  if (spec.name === undefined) throw new EntryError('name: missing (the package name or a ./relative path of the plugin)')
  spec.config = interpolate(raw.config ?? undefined, state.env, 'config')
  return undefined
}

function claimId(id: unknown, spec: EntrySpec, state: Walk, position: string) {
  if (typeof id !== 'string' || !id.trim() || /\s/.test(id)) {
    throw new EntryError(`id: expected a string without spaces, got ${describeValue(id)}`)
  }
  spec.id = id
  spec.label = `entry "${id}"`
  const first = state.seen.get(id)
  if (first !== undefined) {
    spec.label = `entry "${id}" (#${position})`
    throw new EntryError(`id: "${id}" is already used by entry #${first}`)
  }
  state.seen.set(id, position)
  spec.key = id
}
