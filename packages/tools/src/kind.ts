import { TOOL_KINDS, type ToolDefinition, type ToolKind } from './types.ts'

/** A tool's kind: what it declared, `other` when it declared none (an outside author's tool keeps working). */
export function kindOf(tool: Pick<ToolDefinition, 'kind'> | undefined): ToolKind {
  return tool?.kind ?? 'other'
}

/** Whether a tool's calls change nothing: declared so, or implied by a reading kind. */
export function isReadOnly(tool: Pick<ToolDefinition, 'kind' | 'readOnly'> | undefined): boolean {
  return tool?.readOnly ?? (tool?.kind === 'read' || tool?.kind === 'search')
}

/** Registration refuses a kind that is not one of `TOOL_KINDS`: a misspelt kind must not silently become `other`. */
export function checkKind(name: string, kind: unknown): void {
  if (kind !== undefined && !(TOOL_KINDS as readonly unknown[]).includes(kind)) {
    throw new TypeError(`tool "${name}": kind must be one of ${TOOL_KINDS.join(', ')}, not ${JSON.stringify(kind)}`)
  }
}
