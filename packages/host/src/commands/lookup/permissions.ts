import type { App } from '../../app.ts'
import type { GlobalOptions } from '../../command.ts'
import { HostError } from '../../errors.ts'

/** The variable `--permissions` sets for the cordis.yml (`mode: ${GOALKEEPER_PERMISSIONS:-workspace-write}`). */
export const PERMISSIONS_VARIABLE = 'GOALKEEPER_PERMISSIONS'

/**
 * `--permissions MODE` must be the mode in force, not a wish: a composition without the permissions plugin,
 * or one whose entry fixes another mode, is refused before any tool can run.
 */
export function assertPermissions(app: App, globals: Pick<GlobalOptions, 'permissions'>): void {
  const wanted = globals.permissions
  if (!wanted) return
  const service = app.ctx.get('permissions')
  if (!service) {
    throw new HostError(`--permissions ${wanted}: ${app.report.file} does not load the permissions plugin`, {
      hint: `add an entry \`name: '@goalkeeper/permissions'\` with \`config: { mode: \${${PERMISSIONS_VARIABLE}:-workspace-write} }\``,
    })
  }
  if (service.mode !== wanted) {
    throw new HostError(`--permissions ${wanted}: the permissions entry of ${app.report.file} fixes the mode ${service.mode}`, {
      hint: `write its mode as \`\${${PERMISSIONS_VARIABLE}:-${service.mode}}\` so the command line can choose`,
    })
  }
}

/**
 * The header's permissions line, short enough for 80 columns after `goalkeeper: `: the mode, whether
 * commands are sandboxed, and what happens to calls that need a yes. `goalkeeper check` gives the details.
 */
export function permissionsHeader(app: App, attended: boolean): string {
  const service = app.ctx.get('permissions')
  if (!service) return 'permissions: none loaded; tools run unsandboxed with your rights'
  const { mode, network, sandbox } = service.describe()
  if (mode === 'full') return 'permissions full: tools run unsandboxed with your rights'
  const commands = sandbox.available ? `sandboxed, ${network ? 'network' : 'no network'}` : 'no sandbox, no commands'
  const others = mode === 'read-only' ? 'the rest' : 'others'
  return `permissions ${mode} (${commands}); ${others} ${attended ? 'ask you' : 'denied'}`
}

/**
 * The full permissions line `check` prints. `attended`: a person can be asked (chat on a terminal); otherwise calls the
 * mode does not allow are denied, and the line says so.
 */
export function describePermissions(app: App, attended: boolean): string {
  const service = app.ctx.get('permissions')
  if (!service) return 'permissions: no permissions plugin loaded; tools run with your rights and commands unsandboxed'
  const { summary, mode } = service.describe()
  const unattended = mode === 'full' ? '' : attended ? '' : ' (unattended: such calls are denied)'
  return `permissions ${summary.replace(/need a person's yes/, (words) => words + unattended)}`
}
