export * from './types.ts'

import type { ToolService } from './types.ts'

declare module 'cordis' {
  interface Context {
    tools: ToolService
  }
}
