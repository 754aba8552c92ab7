import type { App } from '../../app.ts'
import type { GlobalOptions } from '../../command.ts'
import { HostError } from '../../errors.ts'
import { cliCommand } from '../render/hints.ts'

const checkHint = (globals: Pick<GlobalOptions, 'cwd' | 'config'>) => `\`${cliCommand(globals, 'check')}\` lists every entry`

/**
 * Agent commands refuse to start on a composition with a failed or waiting entry: a guard that did not
 * load must not silently leave an agent unguarded. Every problem goes into the one error line (the CLI
 * keeps the loader's own lines for them out of the way).
 */
export function assertComposition(app: App, globals: Pick<GlobalOptions, 'cwd' | 'config'>): void {
  const { report } = app
  if (report.ok) return
  const problems = report.entries.flatMap((entry) => {
    if (entry.status === 'failed') return [entry.error ?? `entry "${entry.id}" failed`]
    if (entry.status === 'waiting') return [`entry "${entry.id}" waits for ${entry.waitingFor?.map((name) => `ctx.${name}`).join(', ') || 'a service'}, which no loaded entry provides`]
    return []
  })
  const what = problems.length === 1 ? 'an entry did not load' : `${problems.length} entries did not load`
  // A few reasons keep the line readable; check lists them all.
  const shown = problems.length > 3 ? [...problems.slice(0, 3), `and ${problems.length - 3} more`] : problems
  throw new HostError(`${report.file}: ${what}: ${shown.join('; ')}`, {
    hint: `fix ${problems.length === 1 ? 'it' : 'them'} or mark ${problems.length === 1 ? 'it' : 'them'} \`disabled: true\`; ${checkHint(globals)}`,
  })
}

/** Throws a configuration error naming the services the composition does not provide. */
export function assertServices(app: App, globals: Pick<GlobalOptions, 'cwd' | 'config'>, names: string[], purpose: string): void {
  const missing = names.filter((name) => app.ctx.get(name) === undefined)
  if (!missing.length) return
  const list = missing.map((name) => `ctx.${name}`).join(', ')
  throw new HostError(`${purpose} needs ${list}, which ${app.report.file} does not provide`, { hint: `add the plugin that provides it; ${checkHint(globals)}` })
}
