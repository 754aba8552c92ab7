import path from 'node:path'
import type { Context } from 'cordis'
import Schema from 'schemastery'
import { defaultSessionsDir, LEGACY_DIR } from '@goalkeeper/session'
import { JsonlFileStore } from './jsonl-store.ts'

export { JsonlFileStore } from './jsonl-store.ts'
export { describeHolder, type LockHolder } from './lock.ts'

export const name = 'session-jsonl'
export const inject: string[] = []

export const Config = Schema.object({
  dir: Schema.string().default('').description('Directory of the session files; a relative path is resolved against the working directory when the plugin starts. Empty: $XDG_STATE_HOME/goalkeeper/sessions/<workspace-key>, outside the workspace, and sessions already in the workspace\'s .goalkeeper/sessions are still found.'),
})
export type Config = Schemastery.TypeT<typeof Config>

export const apply = (ctx: Context, config: Config) => {
  // The workspace is the working directory when the plugin starts (the CLI changes to --cwd first).
  const workspace = process.cwd()
  const dir = config.dir ? path.resolve(config.dir) : defaultSessionsDir(workspace)
  const olderDirs = config.dir ? [] : [path.join(workspace, LEGACY_DIR)]
  // Files hold nothing open between writes: there is nothing to close when the plugin stops.
  ctx.provide('sessionStore', new JsonlFileStore(dir, { olderDirs }))
}
