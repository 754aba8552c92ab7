import type { Context } from 'cordis'
import Schema from 'schemastery'
import type { ToolCallReport, ToolCallReview, ToolCallVerdict, ToolService } from './types.ts'
import { ToolRegistry } from './registry.ts'

export type {
  ToolAgent, ToolCallContext, ToolCallReport, ToolCallReview, ToolCallVerdict, ToolDefinition, ToolDiff, ToolKind, ToolLocation, ToolResult, ToolService,
} from './types.ts'
export { TOOL_KINDS } from './types.ts'
export { isReadOnly, kindOf } from './kind.ts'
export type { ToolDenialInfo, ToolRewriteInfo } from '@goalkeeper/session'
export { denial } from './pipeline.ts'

declare module 'cordis' {
  interface Context {
    /** The tool registry and the per-call seam (section 5). */
    tools: ToolService
  }
  interface Events {
    /**
     * Waterfall, awaited before each validated call runs: a listener denies the call (`{ kind: 'deny', by,
     * reason }`, without calling `next()`), rewrites its arguments (`review.rewrite(...)` before `next()`), or
     * passes (`return next()`). A throwing listener denies the call. DESIGN.md section 5.
     */
    'tool/before-call'(review: ToolCallReview, next: () => Promise<ToolCallVerdict>): Promise<ToolCallVerdict>
    /** Isolated, after every `ctx.tools.execute`: the call and its result (denials and failures included). */
    'tool/after-call'(report: ToolCallReport): void
  }
}

export const name = 'tools'
export const inject: string[] = []

export const Config = Schema.object({
  maxContentChars: Schema.natural().min(1000).default(100_000)
    .description('Results longer than this many characters are cut, with a note saying so.'),
  maxArgumentChars: Schema.natural().min(1000).default(1_000_000)
    .description('Calls whose raw arguments are longer than this are refused unparsed.'),
})

export const apply = (ctx: Context, config: Schemastery.TypeT<typeof Config>) => {
  new ToolRegistry(ctx, { maxContentChars: config.maxContentChars, maxArgumentChars: config.maxArgumentChars })
}
