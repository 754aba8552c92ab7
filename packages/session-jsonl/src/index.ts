import path from 'node:path'
import type { Context } from 'cordis'
import Schema from 'schemastery'
import { defaultSessionsDir, LEGACY_DIR, projectRoot, sessionsRoot } from '@goalkeeper/session'
import { JsonlFileStore, SEGMENT_BYTES } from './jsonl-store.ts'

export { JsonlFileStore, SEGMENT_BYTES } from './jsonl-store.ts'
export { describeHolder, type LockHolder } from './lock.ts'

export const name = 'session-jsonl'
export const inject: string[] = []

export const Config = Schema.object({
  dir: Schema.string().default('').description('Directory of the session files; a relative path is resolved against the working directory when the plugin starts. Empty: $XDG_STATE_HOME/goalkeeper/sessions/<project-key> (the project is the git top level, else the working directory), outside the workspace; sessions kept per directory before, and those in the workspace\'s .goalkeeper/sessions, are still found, and any project\'s session is found by its id.'),
  segmentBytes: Schema.natural().default(SEGMENT_BYTES).description('A log signed per batch (version 2) starts a new segment file at its next checkpoint once the live one holds this many bytes (default 64 MiB); 0: a log stays one file.'),
})
export type Config = Schemastery.TypeT<typeof Config>

export const apply = (ctx: Context, config: Config) => {
  // The workspace is the working directory when the plugin starts (the CLI changes to --cwd first).
  const workspace = process.cwd()
  // Sessions belong to the project (the git top level, else the workspace), found from any directory in it.
  const project = projectRoot(workspace)
  if (config.dir) return void ctx.provide('sessionStore', new JsonlFileStore(path.resolve(config.dir), { segmentBytes: config.segmentBytes }))
  // Where sessions were kept before: per exact directory, and inside the workspace (or the project).
  const olderDirs = [defaultSessionsDir(workspace), path.join(workspace, LEGACY_DIR), path.join(project, LEGACY_DIR)]
  // Files hold nothing open between writes: there is nothing to close when the plugin stops.
  ctx.provide('sessionStore', new JsonlFileStore(defaultSessionsDir(project), { olderDirs, everywhere: sessionsRoot(), segmentBytes: config.segmentBytes }))
}
