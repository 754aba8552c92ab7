import type { App } from '../../app.ts'
import { HostError } from '../../errors.ts'

const CHECK_HINT = 'fix cordis.yml; `goalkeeper check` shows what loaded'

/**
 * Agent commands refuse to start on a composition with a failed or waiting entry: a guard that did not
 * load must not silently leave an agent unguarded. The loader has already logged each failure.
 */
export function assertComposition(app: App): void {
  const { report } = app
  if (report.ok) return
  const failed = report.entries.filter((entry) => entry.status === 'failed')
  const waiting = report.entries.filter((entry) => entry.status === 'waiting')
  const first = failed[0]?.error ?? (waiting[0] && `entry "${waiting[0].id}" waits for ${waiting[0].waitingFor?.join(', ') || 'a service'}`)
  const count = failed.length + waiting.length
  throw new HostError(`${report.file}: ${count} ${count === 1 ? 'entry' : 'entries'} did not load (${first})`, { hint: CHECK_HINT })
}

/** Throws a configuration error naming the services the composition does not provide. */
export function assertServices(app: App, names: string[], purpose: string): void {
  const missing = names.filter((name) => app.ctx.get(name) === undefined)
  if (!missing.length) return
  const list = missing.map((name) => `ctx.${name}`).join(', ')
  throw new HostError(`${purpose} needs ${list}, which ${app.report.file} does not provide`, { hint: CHECK_HINT })
}

/** Whether a loaded entry runs the plugin called `name` (its exported `name`). */
export function hasPlugin(app: App, name: string): boolean {
  return app.loader.entries.some((entry) => entry.status === 'loaded' && entry.fiber?.name === name)
}
