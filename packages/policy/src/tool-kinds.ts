import type { Context } from 'cordis'
import Schema from 'schemastery'
import { isReadOnly, kindOf, TOOL_KINDS, type ToolKind } from '@goalkeeper/tools'
import { untraced } from '@goalkeeper/kit'
import { wildcard } from './wildcard.ts'

/** A config field: a list of tool kinds (`TOOL_KINDS` of `@goalkeeper/tools`), defaulting to `kinds`. */
export const ToolKinds = (kinds: readonly ToolKind[]) => Schema.array(Schema.union([...TOOL_KINDS])).default([...kinds])

/** Which tools a policy means: by name pattern (`*` wildcards), or by the kind the tool declares. */
export interface ToolChoice {
  names: readonly string[]
  kinds: readonly ToolKind[]
  /** Leave out tools whose calls change nothing (`readOnly`), whatever their kind; a named tool always counts. */
  changing?: boolean
}

/**
 * A matcher of tool names for a `ToolChoice`. A tool's kind is looked up in `ctx.tools` when a call is
 * judged (a tool no longer registered is `other`), so the defaults follow what the tools say of themselves
 * and a policy needs no list of tool names.
 */
export function toolMatcher(ctx: Context, { names, kinds, changing = false }: ToolChoice): (name: string) => boolean {
  const named = wildcard(names)
  // Read once: every `ctx.get` read goes through Cordis's context proxy (tens of microseconds), and this runs
  // for every call judged. The lookup it returns still asks for the tools service live at each call.
  const service = ctx.get
  return (name) => {
    if (named(name)) return true
    if (!kinds.length) return false
    // Without Cordis's tracing proxy: `get` reads the registry's own map, and a read through the proxy costs.
    const tool = untraced(service('tools'))?.get(name)
    return kinds.includes(kindOf(tool)) && !(changing && isReadOnly(tool))
  }
}
