import type { ToolKind } from '@goalkeeper/tools'

/** The part of an MCP tool listing's `annotations` that says what the tool does. */
export interface McpToolAnnotations {
  readOnlyHint?: unknown
  destructiveHint?: unknown
}

/**
 * The kind of an MCP tool, from its annotations: `readOnlyHint: true` is `read`; everything else is
 * `other`, destructive or not. `edit` and `execute` are what the permission modes let through in
 * `workspace-write` because the workspace tools are confined to the workspace and commands are sandboxed;
 * a server's tool is neither, so it keeps asking (the permissions `classes` can say otherwise per tool).
 */
export function mcpKind(annotations: McpToolAnnotations | undefined): ToolKind {
  return annotations?.readOnlyHint === true ? 'read' : 'other'
}
