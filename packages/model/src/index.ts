export * from './types.ts'

import type { ModelService } from './types.ts'

declare module 'cordis' {
  interface Context {
    models: ModelService
  }
}
