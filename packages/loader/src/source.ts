import type { Context } from 'cordis'

declare module 'cordis' {
  interface Context {
    /**
     * Absolute path of the cordis.yml an entry was loaded from, set by the loader on the context it hands
     * each entry (and so on everything that entry starts). Absent for plugins started from code. Read it
     * with `compositionFileOf(ctx)`: Cordis 4 throws on reading a property a context does not have.
     */
    compositionFile?: string
  }
}

/**
 * The cordis.yml this plugin's entry came from, or undefined for a plugin started from code. Plugins that
 * must tell a file someone else may have written (a workspace's) from the user's own ask this.
 */
export function compositionFileOf(ctx: Context): string | undefined {
  return 'compositionFile' in ctx && typeof ctx.compositionFile === 'string' ? ctx.compositionFile : undefined
}
