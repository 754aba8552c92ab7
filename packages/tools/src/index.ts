import type { Context } from 'cordis'
import Schema from 'schemastery'
import type { ToolService } from './types.ts'
import { ToolRegistry } from './registry.ts'

export type { ToolAgent, ToolCallContext, ToolDefinition, ToolResult, ToolService } from './types.ts'

declare module 'cordis' {
  interface Context {
    tools: ToolService
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
