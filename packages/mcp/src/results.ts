import { clip } from '@goalkeeper/kit'
import type { ToolResult } from '@goalkeeper/tools'
import { CUT_META } from './stdio.ts'

interface Block { type: string; text?: string; mimeType?: string; data?: string; uri?: string; name?: string; resource?: { uri?: string; text?: string; mimeType?: string } }

/** One content block as text the model can read; binary content is described, not inlined. */
function blockText(block: Block): string {
  switch (block.type) {
    case 'text':
      return block.text ?? ''
    case 'image':
    case 'audio':
      return `[${block.type} ${block.mimeType ?? ''}, ${Math.floor(((block.data?.length ?? 0) * 3) / 4)} bytes, not shown]`
    case 'resource_link':
      return `[resource ${block.name ? `${block.name} ` : ''}${block.uri ?? ''}]`
    case 'resource':
      return block.resource?.text ?? `[resource ${block.resource?.uri ?? ''} ${block.resource?.mimeType ?? ''}, not shown]`
    default:
      return `[${block.type} content, not shown]`
  }
}

/** How long the whole message was, when the reader had to cut it (`_meta` of a cut result). */
function cutBytes(result: { _meta?: unknown }): number | undefined {
  const meta = result._meta as Record<string, { bytes?: unknown } | undefined> | undefined
  const bytes = meta?.[CUT_META]?.bytes
  return typeof bytes === 'number' ? bytes : undefined
}

/**
 * An MCP `tools/call` result as the pipeline's result: the text of its blocks, `isError` as a failure, at
 * most `maxChars` characters, with a note to the model when it was cut.
 */
export function toToolResult(result: { content?: unknown; structuredContent?: unknown; isError?: boolean; _meta?: unknown }, maxChars = Infinity): ToolResult {
  const blocks = Array.isArray(result.content) ? (result.content as Block[]) : []
  let content = blocks.map(blockText).filter(Boolean).join('\n')
  if (!content && result.structuredContent !== undefined) content = JSON.stringify(result.structuredContent)
  const wire = cutBytes(result)
  if (wire !== undefined || content.length > maxChars) {
    const size = wire !== undefined ? `${wire} bytes` : `${content.length} characters`
    content = `${clip(content, maxChars, '')}\n[The result was cut: the server sent ${size}; only the first ${Math.min(content.length, maxChars)} characters are shown. Ask for less (a narrower query, a page or a range).]`
  }
  if (result.isError) return { ok: false, content: content || 'The tool reported an error without a message.', error: { code: 'MCP_TOOL_ERROR', message: content || 'The tool reported an error.' } }
  return { ok: true, content: content || '(no content)' }
}

/**
 * The tool's input schema as the tools registry compiles it (JSON Schema 2020-12 in ajv's strict mode):
 * without `$schema` (servers often declare draft-07, which the 2020 compiler refuses), an object at the top.
 */
export function inputSchema(schema: unknown): Record<string, unknown> {
  const copy = JSON.parse(JSON.stringify(schema ?? {})) as Record<string, unknown>
  delete copy.$schema
  copy.type = 'object'
  return copy
}
