import type { Context } from 'cordis'
import type {} from '@goalkeeper/tools'
import { Config, type McpConfig } from './config.ts'
import { McpServer } from './server.ts'

export { Config, type McpConfig } from './config.ts'
export { McpServer } from './server.ts'
export { toToolResult, inputSchema } from './results.ts'
export { mcpKind, type McpToolAnnotations } from './kind.ts'

declare module 'cordis' {
  interface Events {
    /** A server's connection is up (first or after a reconnect), with the server's names of the tools offered. */
    'mcp/connected'(server: string, tools: string[]): void
  }
}

export const name = 'mcp'
export const inject = ['tools']

export const apply = async (ctx: Context, config: McpConfig) => {
  const server = new McpServer(ctx, config)
  // Teardown: the tools go (they are effects of this plugin, removed after this step), the connection closes
  // and a stdio server's process ends before the unload resolves.
  await ctx.effect(() => () => server.close(), 'mcp')
  await server.start()
}
